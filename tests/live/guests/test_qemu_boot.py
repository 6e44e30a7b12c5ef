"""Guests that really boot (TCG here, ~12 s each): device models and cleanup.

They need root, qemu-system-x86_64 and the guest image (built on first use, ~3 minutes,
then cached). Five boots cover the five disk buses and the three NIC models.
"""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from virtbench.machinery.host.net import netns
from virtbench.measure.environments import qemu
from virtbench.measure.environments.qemu.booted.guest import DISK_DRIVERS, NIC_DRIVERS
from virtbench.measure.environments.qemu.vmm.hygiene import is_qemu_alive
from virtbench.measure.environments.base import EnvSpec
from virtbench.core.errors import EnvironmentUnusable

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or qemu.qemu_binary() is None,
    reason="guest boots need root and qemu-system-x86_64")



def env_for(spec):
    return qemu.Qemu(EnvSpec.parse(spec))


# three boots: the published studies' buses (IDE, AHCI, virtio) and NICs (e1000, rtl8139,
# virtio-net) once each; the buses beyond them (virtio-scsi, NVMe) with --run-slow
PAIRS = [("virtio-blk", "e1000"), ("ahci", "virtio-net"), ("ide", "rtl8139"),
         pytest.param("virtio-scsi", "rtl8139", marks=pytest.mark.slow),
         pytest.param("nvme", "e1000", marks=pytest.mark.slow)]


@pytest.mark.parametrize("disk,nic", PAIRS)
def test_guest_sees_the_device_models_asked_for(guest_image, disk, nic):
    env = env_for(f"qemu:accel=tcg,disk={disk},nic={nic}")
    try:
        env.start()
        assert env.label == f"qemu-tcg/{disk}/{nic}"
        assert env.boot_s is not None and env.boot_s < 120
        dev = env.scratch_device()
        assert dev.startswith("/dev/disk/by-id/") and dev.endswith("vbscratch")
        disk_drivers = env.guest.scratch_drivers()
        assert set(disk_drivers) & set(DISK_DRIVERS[disk]), (disk, disk_drivers)
        nic_drivers = env.guest.nic_drivers()
        assert set(nic_drivers) & set(NIC_DRIVERS[nic]), (nic, nic_drivers)
        if disk == "ide":
            assert env.machine == "pc"
            assert "ahci" not in disk_drivers
        # the scratch disk is usable, and the peer in the namespace is reachable
        size = env.exec(["blockdev", "--getsize64", dev], timeout=30)
        assert size.exit == 0 and int(size.stdout) == 4 << 30
        ping = env.exec(["ping", "-c", "1", "-W", "5", env.peer_ip], timeout=30)
        assert ping.exit == 0, ping.stdout + ping.stderr
        assert env.exec(["test", "-x", env.kernel_path("stream")], timeout=10).exit == 0
    finally:
        env.stop()
    assert_nothing_left(env_ns=None)


def assert_nothing_left(env_ns=None, workdir=None, qemu_pid=None, loops=(), wait=15.0):
    deadline = time.monotonic() + wait
    while True:
        left = []
        if env_ns and env_ns in netns.list_namespaces():
            left.append(f"namespace {env_ns}")
        if workdir and Path(workdir).exists():
            left.append(f"work dir {workdir}")
        if qemu_pid and is_qemu_alive(qemu_pid):
            left.append(f"QEMU pid {qemu_pid}")
        for loop in loops:
            out = subprocess.run(["losetup", loop], capture_output=True, text=True)
            if out.returncode == 0 and out.stdout.strip():
                left.append(f"loop {loop}")
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert not left, "left behind: " + ", ".join(left)


def test_pause_resume_metadata_and_paths(guest_image):
    env = env_for("qemu:accel=tcg,backing=qcow2,aio=io_uring")
    try:
        env.start()
        env.pause()
        env.resume()
        assert env.exec(["true"], timeout=30).exit == 0
        # the scratch file system lives on the scratch disk
        d = env.scratch_dir()
        res = env.exec(["sh", "-c", f"echo hi > {d}/f && findmnt -n -o SOURCE -T {d}"],
                       timeout=60)
        dev = env.exec(["readlink", "-f", env.scratch_device()], timeout=10).stdout.strip()
        assert res.exit == 0 and res.stdout.strip() == dev
        # the network path: guest -> host side -> remote namespace
        path = env.net_path()
        assert path.nic == "virtio-net" and path.env_address == env.guest_ip
        ping = env.exec(["ping", "-c", "1", "-W", "5", path.remote_address], timeout=30)
        assert ping.exit == 0, ping.stdout + ping.stderr
        # the guest's sshd with the image's key, from the host side
        t = env.ssh_target()
        ssh = subprocess.run(t.prefix + ["ssh", "-i", t.identity, "-p", str(t.port),
                                         "-o", "StrictHostKeyChecking=no",
                                         "-o", "UserKnownHostsFile=/dev/null",
                                         "-o", "BatchMode=yes", f"{t.user}@{t.address}",
                                         "cat /proc/sys/kernel/hostname"],
                             capture_output=True, text=True, timeout=60)
        assert ssh.returncode == 0 and ssh.stdout.strip() == "vbguest", ssh.stderr
        meta = env.metadata()
        assert meta["accel"] == "tcg" and meta["qemu_version"]
        assert meta["disk"] == "virtio-blk" and "virtio_blk" in meta["guest_disk_drivers"]
        assert meta["kernel"] and "Debian" in (meta.get("os") or "")
        assert meta["hypervisor_flag"] is True
    finally:
        env.stop()


def test_boot_timeout_kills_qemu_and_keeps_console_log(guest_image):
    env = env_for("qemu:accel=tcg,boot_timeout=3")
    with pytest.raises(qemu.GuestBootError) as exc:
        env.start()
    log = exc.value.console_log
    assert log is not None and log.exists() and str(log) in str(exc.value)
    assert env.vmm.proc is None and env.workdir is None
    assert not [n for n in netns.list_namespaces() if n.startswith("vb-")
                and not netns.owner_alive((netns.OWNERS / n).read_text()
                                          if (netns.OWNERS / n).exists() else "")]


def test_qemu_failing_to_start_reports_its_stderr(guest_image):
    env = env_for("qemu:accel=tcg,cpu=no-such-cpu")
    with pytest.raises(EnvironmentUnusable, match="QEMU failed to start: .*"):
        env.start()
    assert env.vmm.proc is None


def test_a_guest_that_resets_while_booting_says_so_and_keeps_its_console(guest_image):
    """No init in the initramfs: the kernel cannot mount LABEL= roots by itself and panics;
    panic=-1 resets the guest and -no-reboot ends QEMU with status 0, nothing on stderr: a
    boot that failed (GuestBootError, which the nested kind boots once more), its console kept."""
    env = env_for("qemu:accel=tcg")
    env.extra_boot_args = ["rdinit=/no-such-init"]
    try:
        with pytest.raises(qemu.GuestBootError) as exc:
            env.start()
    finally:
        env.stop()
    text = str(exc.value)
    assert "QEMU failed to start: QEMU exited (status 0); guest Kernel panic - not syncing: " \
        in text, text
    log = Path(text.rsplit("; console log: ", 1)[1])
    assert log.exists() and "Unable to mount root fs" in log.read_text(errors="replace")
    assert exc.value.console_log == log
    assert env.vmm.proc is None


_children: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def _no_child_outlives_its_test():
    """A test that fails before its child ends (a signal it never got) must not leave a
    guest running: SIGTERM (virtbench's own clean-up), then SIGKILL (its guardian's)."""
    yield
    while _children:
        proc = _children.pop()
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


def start_child(spec):
    proc = subprocess.Popen([sys.executable, str(HERE / "_guest_child.py"), spec],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=str(REPO), env=dict(os.environ, PYTHONPATH=str(REPO)))
    _children.append(proc)
    return proc


def read_stage(proc, stage, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError("child ended early: " + proc.stderr.read()[-2000:])
        msg = json.loads(line)
        if msg["stage"] == stage:
            return msg
    raise AssertionError(f"no {stage} in time")


def test_ctrl_c_during_boot_leaves_nothing(guest_image):
    proc = start_child("qemu:accel=tcg")
    info = read_stage(proc, "booting")
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    assert_nothing_left(info["netns"], info["workdir"], info["qemu_pid"])


def test_ctrl_c_after_boot_leaves_nothing(guest_image):
    proc = start_child("qemu:accel=tcg")
    info = read_stage(proc, "booting")
    ready = read_stage(proc, "ready")
    assert ready["extra_netns"]
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    assert_nothing_left(info["netns"], info["workdir"], info["qemu_pid"])
    for ns in ready["extra_netns"]:
        assert_nothing_left(ns)


def test_sigkill_of_virtbench_leaves_nothing(guest_image):
    # backing=device: a loop device too, which the guardian must detach
    proc = start_child("qemu:accel=tcg,backing=device,disk=ahci")
    info = read_stage(proc, "booting")
    assert info["loops"]
    ready = read_stage(proc, "ready")
    proc.kill()
    proc.wait(timeout=10)
    assert_nothing_left(info["netns"], info["workdir"], info["qemu_pid"], info["loops"])
    for ns in ready["extra_netns"]:
        assert_nothing_left(ns)


@pytest.mark.slow
def test_serial_agent_fallback(guest_image):
    env = env_for("qemu:accel=tcg,agent=serial")
    try:
        env.start()
        res = env.exec(["sh", "-c", "echo hello; cat /proc/cmdline"], timeout=30)
        assert res.exit == 0 and res.stdout.startswith("hello")
    finally:
        env.stop()
