"""What class Qemu settles before a guest starts (resolve()): the accelerator (KVM when a probe
boot works, else TCG with the reason), vhost-net, and whether the host has what the options
ask for (huge pages, an NBD or NFS server)."""
from __future__ import annotations

import os

from ....core.errors import EnvironmentUnusable, VirtbenchError
from . import hugepages, netdisk
from .vmm import kvm_probe
from .cmdline.options import size_bytes


def choose_accel(wanted: str, spec, qemu=None) -> tuple[str, str, str | None]:
    """(accelerator, why, a note for the report or None) for accel=`wanted` (auto|kvm|tcg):
    accel=kvm that the probe refuses is an error naming the fix; auto falls back to TCG.
    `qemu`: the environment's QemuBinary (None or the system's: the system's QEMU)."""
    if wanted == "tcg":
        return "tcg", "requested (accel=tcg)", None
    if qemu is None or qemu.system:
        kvm = kvm_probe.kvm_probe(build=True)     # the kernel first, then the probe
    else:
        kvm = kvm_probe.kvm_probe(build=True, qemu=qemu)
    if kvm.usable:
        return "kvm", ("requested (accel=kvm); " if wanted == "kvm" else "") + kvm.reason, None
    if wanted == "kvm":
        raise EnvironmentUnusable(f"environment {spec}: accel=kvm is not usable "
                                  f"here ({kvm.reason}); use accel=tcg or accel=auto")
    return "tcg", kvm.reason, f"TCG, not KVM: {kvm.reason}"


def check_host_support(values: dict) -> None:
    """The host has what the options ask for: huge pages for the guest's RAM, a disk server."""
    if values.get("hugepages") == "on":
        hugepages.check(size_bytes(values["mem"]))
    if values["backing"] == "nbd":
        netdisk.check_nbd()
    if values["backing"] == "nfs":
        netdisk.check_nfs()


def choose_vhost(values: dict) -> bool:
    """vhost-net for the NIC: on (must work), off, or auto (when /dev/vhost-net exists);
    only virtio-net has it."""
    vh = values["vhost"]
    has_vhost = os.path.exists("/dev/vhost-net")
    if values["nic"] != "virtio-net":
        if vh == "on":
            raise VirtbenchError("environment qemu: vhost=on works only with nic=virtio-net")
        return False
    if vh == "on" and not has_vhost:
        raise EnvironmentUnusable("environment qemu: vhost=on but /dev/vhost-net does not "
                                  "exist; load it with: modprobe vhost_net")
    return vh == "on" or (vh == "auto" and has_vhost)
