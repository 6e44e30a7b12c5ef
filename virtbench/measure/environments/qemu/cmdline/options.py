"""The `qemu` kind's options: value converters, the option table, checks of a combination."""
from __future__ import annotations

import re

from .....core.errors import VirtbenchError
from .....machinery.image.suites import DEFAULT_SUITE, SUITES
from ...base import Option
from .firmware import DEFAULT as DEFAULT_FIRMWARE, FIRMWARES
from ..booted.tunings import TUNINGS

DISKS = ("virtio-blk", "virtio-scsi", "ahci", "ide", "nvme")
NICS = ("virtio-net", "e1000", "rtl8139")
BACKINGS = ("raw", "qcow2", "device", "nbd", "nfs")
CACHES = ("none", "writeback", "writethrough", "directsync", "unsafe")


def _size(text: str) -> str:
    if not re.fullmatch(r"\d+[MGmg]?", text):
        raise ValueError("write a size such as 512M or 2G")
    return text.upper()


def size_bytes(size: str) -> int:
    """A size as _size() keeps it (512M, 2G, or plain MiB as QEMU's -m reads it) in bytes."""
    unit = {"M": 2**20, "G": 2**30}.get(size[-1:].upper())
    return int(size[:-1]) * unit if unit else int(size) * 2**20


def _vcpus(text: str) -> int:
    n = int(text)
    if n < 1:
        raise ValueError("at least 1")
    return n


def _queues(text: str) -> int | str:
    return "auto" if text == "auto" else _vcpus(text)


def _timeout(text: str) -> float:
    v = float(text)
    if v <= 0:
        raise ValueError("must be positive")
    return v


def resolve_machine(disk: str, machine: str) -> str:
    """The machine type: IDE needs pc (on q35 `if=ide` would silently be AHCI)."""
    if machine == "microvm" and disk != "virtio-blk":
        raise VirtbenchError(f"environment qemu: machine=microvm has no {disk} (its devices "
                             "are virtio-mmio); drop disk= or write disk=virtio-blk")
    if machine == "auto":
        return "pc" if disk == "ide" else "q35"
    if disk == "ide" and machine != "pc":
        raise VirtbenchError("environment qemu: disk=ide needs machine=pc (q35 has no IDE "
                             "controller); drop machine= or write machine=pc")
    return machine


def check_knobs(values: dict) -> None:
    """The knobs' combinations that cannot work, as one line naming the option and the fix."""
    disk, nic = values["disk"], values["nic"]
    if values.get("iothread") == "on" and disk not in ("virtio-blk", "virtio-scsi"):
        raise VirtbenchError(f"environment qemu: iothread=on works only with disk=virtio-blk "
                             f"or disk=virtio-scsi, not disk={disk}")
    q = values.get("queues", "auto")
    if q != "auto":
        if disk != "virtio-blk" and nic != "virtio-net":
            raise VirtbenchError(f"environment qemu: queues={q} needs disk=virtio-blk or "
                                 f"nic=virtio-net (multiqueue devices)")
        if q > values["vcpus"]:
            raise VirtbenchError(f"environment qemu: queues={q} is more than vcpus="
                                 f"{values['vcpus']}; write vcpus={q} too, or fewer queues")
    if values["backing"] in ("nbd", "nfs") and values["aio"] != "threads":
        raise VirtbenchError(f"environment qemu: aio={values['aio']} is for local files; "
                             f"backing={values['backing']} takes aio=threads (the default)")


def check_machine(values: dict) -> None:
    """microvm (QEMU's minimal machine: no PCI, virtio-mmio devices found through ACPI) has
    virtio devices only: a virtio NIC and the agent on a virtio-serial port."""
    if values.get("machine") != "microvm":
        return
    if values.get("nic") != "virtio-net":
        raise VirtbenchError(f"environment qemu: machine=microvm has no {values.get('nic')} "
                             "(its devices are virtio-mmio); drop nic= or write nic=virtio-net")
    if values.get("agent", "virtio-serial") != "virtio-serial":
        raise VirtbenchError("environment qemu: machine=microvm has one serial port (the "
                             "console); drop agent=serial")
    if values.get("pmtimer", "on") != "on":
        raise VirtbenchError("environment qemu: pmtimer=off is a pc/q35 option; microvm has "
                             "no ACPI PM timer to turn off")


def check_combination(cache: str, aio: str) -> None:
    if aio == "native" and cache not in ("none", "directsync"):
        raise VirtbenchError(f"environment qemu: aio=native needs cache=none or cache=directsync "
                             f"(O_DIRECT), not cache={cache}")


OPTIONS = {
    "accel": Option("auto", choices=("auto", "kvm", "tcg"),
                    help="accelerator; auto = kvm when a probe boot works, else tcg"),
    "vcpus": Option(1, convert=_vcpus, help="virtual CPUs"),
    "mem": Option("1G", convert=_size, help="guest memory, e.g. 1G or 512M"),
    "machine": Option("auto", choices=("auto", "q35", "pc", "microvm"),
                      help="machine type; auto = q35, or pc when disk=ide; microvm: QEMU's "
                           "minimal machine (virtio-mmio devices only)"),
    "cpu": Option("auto", help="CPU model; auto = host under kvm, max under tcg"),
    "disk": Option("virtio-blk", choices=DISKS, help="bus of the scratch disk"),
    "cache": Option("none", choices=CACHES, help="host cache mode of the scratch disk"),
    "aio": Option("threads", choices=("threads", "native", "io_uring"),
                  help="host I/O engine of the scratch disk"),
    "backing": Option("raw", choices=BACKINGS,
                      help="scratch disk backing: raw file, qcow2 file, a block device "
                           "(a loop device standing in for one), nbd (qemu-nbd serving the "
                           "raw file on a unix socket) or nfs (the raw file on a user-space "
                           "NFS server, read by QEMU's libnfs client)"),
    "nic": Option("virtio-net", choices=NICS, help="NIC model"),
    "vhost": Option("auto", choices=("auto", "on", "off"),
                    help="vhost-net for virtio-net; auto = on when /dev/vhost-net exists"),
    "scratch": Option("4G", convert=_size, in_label=False, help="scratch disk size"),
    "agent": Option("virtio-serial", choices=("virtio-serial", "serial"), in_label=False,
                    help="agent transport: a virtio-serial port, or the 2nd serial port"),
    "boot_timeout": Option(180.0, convert=_timeout, in_label=False,
                           help="seconds to wait for the guest agent"),
    "hugepages": Option("off", choices=("off", "on"),
                        help="guest RAM from a memfd of 2 MiB huge pages (hugetlb), reserved "
                             "for the run and released after it"),
    "iothread": Option("off", choices=("off", "on"),
                       help="the scratch disk's I/O in an iothread of its own "
                            "(virtio-blk, virtio-scsi)"),
    "queues": Option("auto", convert=_queues,
                     help="queues of the virtio-blk scratch disk and of virtio-net "
                          "(multiqueue, at most vcpus); auto = QEMU's default (virtio-blk: "
                          "one per vCPU, virtio-net: one)"),
    "binary": Option("", in_label=False,
                     help="another QEMU: the path of its qemu-system-x86_64 (e.g. the last "
                          "line of `virtbench qemu fetch SUITE`), or fetched:SUITE for that "
                          "suite's QEMU in virtbench's cache (study files); its data directories "
                          "from its prefix (PREFIX/share/qemu, ...); the label says its "
                          "version; default: the system's"),
    "datadir": Option("", in_label=False,
                      help="another QEMU's data and firmware directory (QEMU's -L) when it "
                           "is not under the binary's prefix; needs binary="),
    "linux": Option(DEFAULT_SUITE, choices=tuple(SUITES),
                    help="the Debian suite the guest's kernel comes from (the rest of the image "
                         "stays bookworm's): bookworm-backports = Linux 6.12; its image is "
                         "built once and cached (virtbench image build --linux SUITE)"),
    "firmware": Option(DEFAULT_FIRMWARE, choices=FIRMWARES,
                       help="the guest's firmware: seabios (BIOS, the kernel booted through "
                            "PVH) or ovmf (UEFI from Debian's ovmf package, the kernel's EFI "
                            "stub)"),
    **TUNINGS,    # guest tunings (booted/tunings.py): applied at boot or before the first trial
}

