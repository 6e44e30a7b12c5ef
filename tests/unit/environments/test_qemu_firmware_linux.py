"""qemu:firmware=seabios|ovmf and qemu:linux=SUITE: options, bad values, labels, the UEFI
flash on the command line, the kernel each firmware boots, the metadata."""
import os
from pathlib import Path

import pytest

from qemukit import argv_cfg as cfg
from virtbench.core.errors import EnvironmentUnusable, VirtbenchError
from virtbench.measure.environments.base import EnvSpec
from virtbench.measure.environments.libvirt import DEFINED_OPTIONS
from virtbench.measure.environments.qemu import Qemu
from virtbench.measure.environments.qemu.cmdline import firmware
from virtbench.measure.environments.qemu.vmm import version
from virtbench.measure.environments.qemu.cmdline.argv import build_argv
from virtbench.machinery.image import guest_image as image


def make(text):
    return Qemu(EnvSpec.parse(text))


def test_defaults_are_todays_guest():
    env = make("qemu:accel=tcg")
    assert env.values["firmware"] == "seabios" and env.values["linux"] == "bookworm"
    assert env.label == "qemu-tcg/virtio-blk/virtio-net"
    assert make("qemu:accel=tcg,linux=bookworm,firmware=seabios").label == env.label


def test_labels_name_what_is_not_the_default():
    assert make("qemu:accel=tcg,linux=bookworm-backports").label == \
        "qemu-tcg/virtio-blk/virtio-net/linux-6.12"
    assert make("qemu:accel=tcg,firmware=ovmf").label == \
        "qemu-tcg/virtio-blk/virtio-net/firmware=ovmf"
    both = make("qemu:accel=tcg,linux=bookworm-backports,firmware=ovmf")
    assert both.label == "qemu-tcg/virtio-blk/virtio-net/linux-6.12/firmware=ovmf"
    named = make("qemu:accel=tcg,linux=bookworm-backports,name=new-kernel")
    assert named.label == "new-kernel"
    assert named.kind_label.endswith("/linux-6.12")          # still in the facts


@pytest.mark.parametrize("spec, words", [
    ("qemu:linux=sid", "linux=sid is not valid; use one of: bookworm, bookworm-backports"),
    ("qemu:firmware=uefi", "firmware=uefi is not valid; use one of: seabios, ovmf"),
    ("qemu:firmware=ovmf,machine=microvm", "machine=microvm has no flash for UEFI"),
])
def test_bad_values_are_one_line(spec, words):
    with pytest.raises(VirtbenchError) as exc:
        make(spec)
    assert words in str(exc.value) and "\n" not in str(exc.value)


def test_ovmf_on_the_command_line():
    plain = build_argv(cfg())
    assert not any("pflash" in a for a in plain)
    argv = build_argv(cfg(firmware_code="/usr/share/OVMF/OVMF_CODE_4M.fd",
                          firmware_vars="/w/ovmf-vars.fd", machine="pc"))
    drives = [argv[i + 1] for i, a in enumerate(argv) if a == "-drive" and "pflash" in argv[i + 1]]
    assert drives == [
        "if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd",
        "if=pflash,format=raw,unit=1,file=/w/ovmf-vars.fd"]
    assert argv[argv.index("-machine") + 1] == "pc,accel=tcg"   # no extra machine property


def test_the_vars_are_a_fresh_private_copy_in_the_work_dir(tmp_path, monkeypatch):
    fake = tmp_path / "OVMF"
    fake.mkdir()
    (fake / firmware.OVMF_CODE).write_bytes(b"code")
    (fake / firmware.OVMF_VARS).write_bytes(b"vars")
    if os.geteuid() == 0:
        monkeypatch.setattr(firmware, "OVMF_DIR", fake)
        work = tmp_path / "work"
        work.mkdir()
        got = firmware.firmware_files("ovmf", work)
        assert got["firmware_code"] == fake / firmware.OVMF_CODE
        assert got["firmware_vars"] == work / "ovmf-vars.fd"
        assert got["firmware_vars"].read_bytes() == b"vars"
        assert got["firmware_vars"].stat().st_mode & 0o777 == 0o600
        os.chmod(fake / firmware.OVMF_CODE, 0o666)               # writable by others: refused
        with pytest.raises(EnvironmentUnusable, match="owned by root and writable by root"):
            firmware.ovmf_files(fake)
    else:                                                        # not root's files: refused
        with pytest.raises(EnvironmentUnusable, match="owned by root"):
            firmware.ovmf_files(fake)
    assert firmware.firmware_files("seabios", tmp_path) == {}
    with pytest.raises(EnvironmentUnusable, match="apt-get install ovmf"):
        firmware.ovmf_files(tmp_path / "none")
    (fake / "link.fd").symlink_to(fake / firmware.OVMF_VARS)
    with pytest.raises(EnvironmentUnusable, match="regular file"):
        firmware._checked(fake / "link.fd")


def test_each_firmware_boots_its_kernel(tmp_path):
    info = image.ImageInfo(path=tmp_path / "root.raw", linux=tmp_path / "vmlinux",
                           initrd=tmp_path / "initrd.img", size_bytes=1, recipe_hash="h",
                           build_s=0.0, reused=True)
    assert firmware.boot_kernel(info, "seabios") == tmp_path / "vmlinux"     # PVH
    assert firmware.boot_kernel(info, "ovmf") == tmp_path / "vmlinuz"        # EFI stub


def test_libvirt_domains_take_linux_but_not_firmware():
    assert "linux" in DEFINED_OPTIONS and "firmware" not in DEFINED_OPTIONS


def test_metadata_names_suite_firmware_and_kernel(monkeypatch):
    monkeypatch.setattr(version, "qemu_version", lambda: ("7.2.22", "QEMU emulator version 7.2.22"))
    env = make("qemu:accel=tcg,linux=bookworm-backports,firmware=ovmf")
    env.resolve()
    env.image = image.ImageInfo(path=Path("/c/root.raw"), linux=Path("/c/vmlinux"),
                                initrd=Path("/c/initrd.img"), size_bytes=1, recipe_hash="h",
                                build_s=0.0, reused=True, linux_version="6.12.95+deb12-amd64",
                                linux_suite="bookworm-backports",
                                linux_deb="linux-image-6.12.95+deb12-amd64 6.12.95-1~bpo12+1")
    meta = env.metadata()                    # not started: the kernel from the image
    assert meta["firmware"] == "ovmf" and meta["guest_linux_suite"] == "bookworm-backports"
    assert meta["guest_kernel"] == meta["guest_kernel_package"] == "6.12.95+deb12-amd64"
    assert meta["guest_kernel_deb"] == "linux-image-6.12.95+deb12-amd64 6.12.95-1~bpo12+1"
    default = make("qemu:accel=tcg")
    default.resolve()
    meta = default.metadata()
    assert meta["firmware"] == "seabios" and meta["guest_linux_suite"] == "bookworm"


def test_the_image_is_built_for_the_suite(monkeypatch):
    asked = []
    monkeypatch.setattr(image, "build", lambda progress=None, linux=None, packages=():
                        asked.append((linux, packages)))
    make("qemu:linux=bookworm-backports")._build_image(None)
    make("qemu")._build_image(None)
    assert asked == [("bookworm-backports", ()), ("bookworm", ())]
