"""Fast tests of the pure parts: options, labels, the QEMU command line, modules.dep, cpio."""
import gzip
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qemukit import argv_cfg as cfg
from virtbench.measure.environments.base import EnvSpec
from virtbench.measure.environments.qemu import Qemu
from virtbench.measure.environments.qemu.vmm import version
from virtbench.measure.environments.qemu.vmm import kvm_probe as kp
from virtbench.measure.environments.qemu.cmdline.argv import build_argv
from virtbench.measure.environments.qemu.booted.guest import guest_kernel_release
from virtbench.measure.environments.qemu.cmdline.options import DISKS
from virtbench.measure.environments.qemu.vmm.hygiene import describe_loss, ended_while_booting
from virtbench.measure.environments.qemu.vmm.version import parse_version
from virtbench.measure.environments.qemu.vmm.process import QemuProcess
from virtbench.core.errors import VirtbenchError
from virtbench.machinery.image import guest_image as image
from virtbench.machinery.image import initramfs

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "qemu"


def make(text):
    return Qemu(EnvSpec.parse(text))


def test_parse_version_real_output():
    assert parse_version((FIX / "version-7.2-debian12.txt").read_text()) == "7.2.22"
    assert parse_version("qemu-img version 7.2.22") is None


def test_bad_choice_lists_valid_values():
    with pytest.raises(VirtbenchError) as exc:
        make("qemu:disk=floppy")
    msg = str(exc.value)
    assert "\n" not in msg
    for bus in DISKS:
        assert bus in msg
    with pytest.raises(VirtbenchError, match="e1000"):
        make("qemu:nic=ne2k")
    with pytest.raises(VirtbenchError, match="unknown option"):
        make("qemu:gpu=1")
    with pytest.raises(VirtbenchError, match="size"):
        make("qemu:mem=lots")


def test_ide_picks_pc_and_rejects_q35():
    assert make("qemu:disk=ide").machine == "pc"
    assert make("qemu:disk=ahci").machine == "q35"
    with pytest.raises(VirtbenchError, match="machine=pc"):
        make("qemu:disk=ide,machine=q35")


def test_aio_native_needs_direct():
    with pytest.raises(VirtbenchError, match="aio=native"):
        make("qemu:aio=native,cache=writeback")
    make("qemu:aio=native,cache=none")


def test_label_shows_resolved_accelerator():
    env = make("qemu:accel=tcg,disk=ide,nic=e1000")
    assert env.label == "qemu-tcg/ide/e1000"  # before resolve: what was asked
    env.resolve()
    assert env.label == "qemu-tcg/ide/e1000"
    assert env.cpu == "max"
    env = make("qemu:disk=nvme,nic=rtl8139,cache=writeback,vcpus=2")
    env.accel = "kvm"  # as resolve() would set it after a good probe
    assert env.label == "qemu-kvm/nvme/rtl8139/vcpus=2/cache=writeback"
    assert make("qemu").label == "qemu-auto/virtio-blk/virtio-net"
    assert make("qemu:machine=pc").label == "qemu-auto/virtio-blk/virtio-net/machine=pc"


def joined(argv):
    return " ".join(map(str, argv))


def test_argv_core():
    argv = build_argv(cfg())
    s = joined(argv)
    assert argv[0] == "qemu-system-x86_64"
    assert "-machine q35,accel=tcg" in s and "-cpu max" in s and "-no-reboot" in s
    assert "file=/c/root.raw,format=raw,if=none,id=root,snapshot=on" in s
    assert "id=scratch,cache=none,aio=threads" in s
    assert "virtserialport,bus=vser0.0,chardev=agent0,name=org.virtbench.agent" in s
    assert "-qmp unix:/w/qmp.sock,server=on,wait=off" in s
    assert "-netdev tap,id=net0,ifname=tap0,script=no,downscript=no,vhost=off" in s
    assert "virtio-net-pci,netdev=net0,mac=52:54:00:01:02:03" in s
    append = argv[argv.index("-append") + 1]
    assert "root=LABEL=vbroot" in append and "console=ttyS0" in append
    assert "vb.ip=10.213.0.2/24" in append and "vb.mac=52:54:00:01:02:03" in append


@pytest.mark.parametrize("disk,needle", [
    ("virtio-blk", "virtio-blk-pci,drive=scratch,serial=vbscratch"),
    ("virtio-scsi", "scsi-hd,drive=scratch,bus=scsi0.0,serial=vbscratch"),
    ("ahci", "ide-hd,drive=scratch,bus=ahci0.0,serial=vbscratch"),
    ("ide", "ide-hd,drive=scratch,bus=ide.0,serial=vbscratch"),
    ("nvme", "nvme,drive=scratch,serial=vbscratch"),
])
def test_argv_disk_models(disk, needle):
    assert needle in joined(build_argv(cfg(disk=disk)))


@pytest.mark.parametrize("nic,model", [("virtio-net", "virtio-net-pci"), ("e1000", "e1000"),
                                       ("rtl8139", "rtl8139")])
def test_argv_nic_models(nic, model):
    s = joined(build_argv(cfg(nic=nic)))
    assert f"-device {model},netdev=net0" in s
    if nic != "virtio-net":
        assert "vhost" not in s


def test_argv_serial_agent_fallback():
    s = joined(build_argv(cfg(agent_transport="serial")))
    assert "virtio-serial" not in s
    assert "-serial file:/w/console.log" in s and "-serial chardev:agent0" in s


def test_vhost_only_for_virtio_net():
    env = make("qemu:accel=tcg,nic=e1000,vhost=on")
    with pytest.raises(VirtbenchError, match="virtio-net"):
        env.resolve()


MODULES_DEP = """\
kernel/fs/ext4/ext4.ko: kernel/lib/crc16.ko kernel/fs/mbcache.ko kernel/fs/jbd2/jbd2.ko
kernel/lib/crc16.ko:
kernel/fs/mbcache.ko:
kernel/fs/jbd2/jbd2.ko:
kernel/drivers/ata/ahci.ko: kernel/drivers/ata/libahci.ko kernel/drivers/ata/libata.ko kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko
kernel/drivers/ata/libahci.ko: kernel/drivers/ata/libata.ko kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko
kernel/drivers/ata/libata.ko: kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko
kernel/drivers/scsi/scsi_mod.ko: kernel/drivers/scsi/scsi_common.ko
kernel/drivers/scsi/scsi_common.ko:
kernel/drivers/net/ethernet/realtek/8139cp.ko: kernel/drivers/net/mii.ko
kernel/drivers/net/mii.ko:
"""


def test_module_load_order_deps_first():
    order = initramfs.module_load_order(MODULES_DEP, ["ahci", "ext4", "virtio_pci", "8139cp"],
                                    builtin="kernel/drivers/virtio/virtio_pci.ko\n")
    names = [p.rsplit("/", 1)[1] for p in order]
    assert names.index("scsi_common.ko") < names.index("scsi_mod.ko") < names.index("libata.ko")
    assert names.index("libata.ko") < names.index("libahci.ko") < names.index("ahci.ko")
    assert names.index("jbd2.ko") < names.index("ext4.ko")
    assert names.index("mii.ko") < names.index("8139cp.ko")
    assert len(names) == len(set(names))
    assert "virtio_pci.ko" not in names


def test_cpio_newc_layout():
    data = initramfs._cpio_newc([("init", 0o100755, b"#!/bin/sh\n"), ("bin", 0o40755, b"")])
    assert data.startswith(b"070701")
    assert b"init\0" in data and b"TRAILER!!!\0" in data
    assert len(data) % 4 == 0


def test_recipe_hash_is_stable_across_processes_and_follows_the_recipe(monkeypatch):
    here = image.recipe_hash()
    there = subprocess.run([sys.executable, "-c", "from virtbench.machinery.image import guest_image as image; "
                            "print(image.recipe_hash())"], capture_output=True, text=True,
                           check=True).stdout.strip()
    assert here == there and re.fullmatch(r"[0-9a-f]{16}", here)
    monkeypatch.setattr(image, "IMAGE_SIZE", str(image.IMAGE_SIZE) + "1")
    assert image.recipe_hash() != here


def test_missing_tool_names_package(monkeypatch):
    monkeypatch.setattr(image.shutil, "which", lambda name: None)
    monkeypatch.setattr(image.Path, "exists", lambda self: False)
    with pytest.raises(VirtbenchError, match="apt-get install mmdebstrap"):
        image.check_tools()


def test_extract_vmlinux_from_xz_and_gzip_payloads():
    import lzma
    elf = b"\x7fELF" + bytes(range(256)) * 20
    assert initramfs.extract_vmlinux(b"MZ-setup-code" * 50 + lzma.compress(elf) + b"\0" * 64) == elf
    assert initramfs.extract_vmlinux(b"setup" * 10 + gzip.compress(elf) + b"trailer") == elf
    assert initramfs.extract_vmlinux(b"no kernel in here") is None


def test_prune_keeps_the_current_image(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTBENCH_CACHE", str(tmp_path))
    current = tmp_path / "images" / image.recipe_hash()
    old = tmp_path / "images" / "0123456789abcdef"
    current.mkdir(parents=True)
    old.mkdir()
    assert image.prune() == [old]
    assert current.exists() and not old.exists()


def test_kvm_probe_is_cached_in_process_and_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTBENCH_CACHE", str(tmp_path))
    monkeypatch.setattr(kp, "_kvm_probe", None)
    monkeypatch.setattr(kp.os.path, "exists", lambda p: True)
    monkeypatch.setattr(kp.os, "access", lambda p, mode: True)
    monkeypatch.setattr(kp, "_probe_kernel", lambda build=False: Path("/boot/vmlinuz-test"))
    monkeypatch.setattr(version, "qemu_version", lambda: ("7.2.22", "QEMU emulator version 7.2.22"))
    calls = []

    def fake_run(kernel, timeout):
        calls.append(kernel)
        return kp.KvmProbe(False, f"kvm probe: guest did not boot in {timeout:.0f} s", timeout)

    monkeypatch.setattr(kp, "_run_kvm_probe", fake_run)
    first = kp.kvm_probe()
    assert not first.usable and "did not boot in 60 s" in first.reason
    assert kp.kvm_probe() is first and len(calls) == 1            # per process
    monkeypatch.setattr(kp, "_kvm_probe", None)
    assert kp.kvm_probe().reason == first.reason and len(calls) == 1  # on disk
    again = kp.kvm_probe(force=True)      # a dataclass is always truthy: check what it holds
    assert again is not first and not again.usable and len(calls) == 2


def test_auto_falls_back_to_tcg_and_says_why(monkeypatch):
    monkeypatch.setattr(version, "qemu_version", lambda: ("7.2.22", "QEMU emulator version 7.2.22"))
    monkeypatch.setattr(kp, "kvm_probe",
                        lambda **kw: kp.KvmProbe(False, "kvm probe: guest did not boot in 20 s"))
    env = make("qemu:disk=ahci")
    env.resolve()
    assert env.accel == "tcg" and env.label == "qemu-tcg/ahci/virtio-net"
    assert "did not boot" in env.accel_reason and env.cpu == "max"
    with pytest.raises(VirtbenchError, match="accel=kvm is not usable here"):
        make("qemu:accel=kvm").resolve()
    monkeypatch.setattr(kp, "kvm_probe",
                        lambda **kw: kp.KvmProbe(True, "kvm probe: booted in 0.4 s"))
    env = make("qemu")
    env.resolve()
    assert env.accel == "kvm" and env.cpu == "host" and env.label.startswith("qemu-kvm/")


def test_guest_kernel_release_from_the_fingerprint(fixture_text):
    from virtbench.machinery.machine import fingerprint
    facts = fingerprint.parse(fixture_text("fingerprint", "native-debian12.txt"))
    assert guest_kernel_release(facts["kernel"]) == "6.18.44-fc-v669"
    assert guest_kernel_release(None) is None and guest_kernel_release("") is None


def test_qemu_metadata_names_host_and_guest_kernel(monkeypatch):
    monkeypatch.setattr(version, "qemu_version", lambda: ("7.2.22", "QEMU emulator version 7.2.22"))
    env = make("qemu:accel=tcg")
    env.resolve()
    meta = env.metadata()             # not started: no agent, so no fingerprint
    assert meta["host_kernel"] == os.uname().release
    assert "guest_kernel" in meta


def test_describe_loss_names_the_signal_and_the_panic():
    console = ("[    0.512345] VFS: Cannot open root device \"LABEL=x\" or unknown-block(0,0)\n"
               "[    0.512400] Kernel panic - not syncing: VFS: Unable to mount root fs on "
               "unknown-block(0,0)\n")
    assert describe_loss(-9, "") == "QEMU was killed (signal 9)"
    assert describe_loss(0, console) == ("QEMU exited (status 0); guest Kernel panic - not "
                                           "syncing: VFS: Unable to mount root fs on "
                                           "unknown-block(0,0)")


def test_a_silent_end_while_booting_says_reset_unless_the_console_has_a_panic():
    """QEMU runs with -no-reboot: a guest's reset (a triple fault too) ends it with status 0
    and nothing on its stderr; CI's nested run saw only "exit status 0"."""
    assert ended_while_booting(0, "[    1.2] virtio_net virtio1 eth0: renamed\n") == (
        "QEMU exited (status 0): the guest reset or powered off while booting (-no-reboot "
        "ends QEMU then)")
    panic = "[    0.5] Kernel panic - not syncing: Requested init /nope failed (error -2).\n"
    assert ended_while_booting(0, panic) == ("QEMU exited (status 0); guest Kernel panic - not "
                                             "syncing: Requested init /nope failed (error -2).")
    assert ended_while_booting(-11, "") == "QEMU was killed (signal 11)"


class _Proc:
    pid = 1
    returncode = None

    def __init__(self):
        self.killed = False

    def poll(self):
        return -9 if self.killed else None

    def wait(self, timeout=None):
        return 0

    def kill(self):
        self.killed = True


def running(env, proc, qmp, agent=None):
    """A guest as the start and ready steps leave it: its VMM and agent, registered."""
    env.vmm = QemuProcess(env.label, Path("/nonexistent"))
    env.vmm.proc, env.vmm.qmp, env.vmm.started_at = proc, qmp, time.monotonic()
    env.resources.add("QEMU", env.vmm.end)
    if agent is not None:
        env._hold_guest(agent)


def test_stopping_a_paused_guest_quits_by_qmp_without_its_frozen_agent(monkeypatch):
    calls = []

    class FrozenAgent:
        def exec(self, *a, **kw):
            raise AssertionError("waited on the frozen agent of a paused guest")

        def close(self):
            calls.append("agent.close")

    class FakeQmp:
        def command(self, name, **kw):
            calls.append(name)
            if name == "quit":
                proc.killed = True
            return {}

        def close(self):
            calls.append("qmp.close")

    env = make("qemu:accel=tcg")
    proc = _Proc()
    running(env, proc, FakeQmp(), FrozenAgent())
    env.pause()
    assert env.paused
    env.stop()
    assert calls[0] == "stop" and "quit" in calls and not env.paused
    assert env.vmm.proc is None and env.agent is None


def test_qemu_is_alive_and_pin_threads_come_from_qmp(fixture_text):
    import json
    reply = json.loads(fixture_text("qemu", "query-cpus-fast-7.2-tcg-smp2.json"))["return"]

    class FakeQmp:
        def command(self, name, **kw):
            assert name == "query-cpus-fast"
            return reply

    env = make("qemu:accel=tcg,vcpus=2")
    assert not env.is_alive() and env.pin_threads(None, {}) is None
    running(env, _Proc(), FakeQmp())
    assert env.is_alive()
    assert env.pin_threads(None, {}) == [(20343, 1), (20344, 1)]


def test_a_failed_pause_still_stops_by_qmp_not_by_the_agent():
    class FrozenAgent:
        def exec(self, *a, **kw):
            raise AssertionError("waited on the agent of a guest that may be paused")

        def close(self):
            pass

    class BrokenQmp:
        def command(self, name, **kw):
            raise OSError("QMP: broken pipe")

        def close(self):
            pass

    env = make("qemu:accel=tcg")
    running(env, _Proc(), BrokenQmp(), FrozenAgent())
    with pytest.raises(OSError):
        env.pause()
    env.stop()
    assert env.vmm.proc is None
