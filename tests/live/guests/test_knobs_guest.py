"""The knobs on guests that really boot (TCG here, ~25 s each): hugepages, iothread, queues
and backing=nbd read back from QEMU and the guest; backing=nbd/nfs leave no server, export,
image, namespace or huge page behind after stop(), Ctrl-C and SIGKILL; (slow) the disk
battery over each backing through the command line."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from virtbench.measure.environments import qemu
from virtbench.measure.environments.base import EnvSpec
from virtbench.measure.environments.qemu import hugepages

from test_qemu_boot import assert_nothing_left, read_stage, start_child  # noqa: F401
from test_qemu_boot import _no_child_outlives_its_test  # noqa: F401  (the autouse fixture)

REPO = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or qemu.qemu_binary() is None,
    reason="guest boots need root and qemu-system-x86_64")



def pool_size():
    return int((hugepages.POOL / "nr_hugepages").read_text())


def servers_left(pids=(), pgid=None):
    """The processes still alive of `pids`, and of process group `pgid`."""
    left = [p for p in pids if Path(f"/proc/{p}").exists()
            and Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"]
    if pgid:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    if os.getpgid(int(entry)) == pgid:
                        left.append(int(entry))
                except OSError:
                    pass
    return left


def wait_gone(pids=(), pgid=None, wait=20.0):
    deadline = time.monotonic() + wait
    while servers_left(pids, pgid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not servers_left(pids, pgid), f"servers left: {servers_left(pids, pgid)}"


def test_knobs_are_read_back_and_released(guest_image):
    before = pool_size()
    env = qemu.Qemu(EnvSpec.parse("qemu:accel=tcg,vcpus=2,hugepages=on,iothread=on,queues=2,"
                                  "backing=nbd"))
    try:
        env.start()
        assert pool_size() >= 512              # 1 GiB of 2 MiB pages for the guest
        nbd = env.work.data["nbd_pid"]
        meta = env.metadata()
        got = meta["knobs_read"]
        assert got["hugepages"] == "on" and got["iothread"] == "on"
        assert got["disk_queues"] == got["nic_queues"] == 2
        assert got["guest_disk_queues"] == got["guest_nic_queues"] == 2
        assert got["cpu"] == "max" and got["backing_protocol"] == "nbd+unix"
        assert meta["hugepages"] == "on" and meta["queues"] == 2 and meta["host_thp"]
        # the disk works over NBD: a file system on it
        assert env.scratch_dir()
    finally:
        workdir, ns = env.workdir, env.ns.name if env.ns else None
        env.stop()
    assert pool_size() == before
    wait_gone([nbd])
    assert_nothing_left(ns, str(workdir))


def test_ctrl_c_with_nbd_leaves_nothing(guest_image):
    proc = start_child("qemu:accel=tcg,backing=nbd")
    info = read_stage(proc, "booting")
    ready = read_stage(proc, "ready")
    assert ready["servers"]["nbd_pid"]
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    wait_gone([ready["servers"]["nbd_pid"]])
    assert_nothing_left(info["netns"], info["workdir"], info["qemu_pid"])


def test_sigkill_with_nfs_and_hugepages_leaves_nothing(guest_image):
    before = pool_size()
    proc = start_child("qemu:accel=tcg,backing=nfs,hugepages=on,mem=512M")
    info = read_stage(proc, "booting")
    ready = read_stage(proc, "ready")
    pgid = ready["servers"]["nfs_pgid"]
    names = {Path(f"/proc/{p}/exe").resolve().name for p in servers_left(pgid=pgid)}
    assert names == {"ganesha.nfsd", "rpcbind"}
    assert pool_size() >= before + ready["servers"]["hugepages_added"]
    proc.kill()
    proc.wait(timeout=10)
    wait_gone(pgid=pgid)
    assert_nothing_left(info["netns"], info["workdir"], info["qemu_pid"])
    for ns in ready["extra_netns"]:
        assert_nothing_left(ns)
    assert pool_size() == before


@pytest.mark.slow
@pytest.mark.parametrize("backing", ["nbd", "nfs"])
def test_disk_battery_over_a_network_backing(guest_image, backing, tmp_path):
    cmd = [sys.executable, "-m", "virtbench.interface.cli.commands", "run", "--env",
           f"qemu:accel=tcg,backing={backing}", "--bench", "dd-write", "--bench",
           "hdparm-read", "--bench", "cdm", "--quick", "--trials", "1", "--no-progress",
           "--store", f"sqlite:///{tmp_path / 'store.db'}"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=3000, cwd=str(REPO),
                         env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert out.returncode == 0, out.stderr[-2000:]
    assert "0/1" in out.stdout and "1/1" not in out.stdout     # no failed trial
    names = subprocess.run(["ps", "-eo", "comm"], capture_output=True, text=True).stdout
    assert "qemu-nbd" not in names and "ganesha.nfsd" not in names
