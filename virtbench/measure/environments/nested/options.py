"""The `nested` kind's options: the inner guest's (where benchmarks run) under the qemu kind's
names, the outer guest's prefixed `outer_`; and the qemu spec of each layer built from them."""
from __future__ import annotations

from ....core.errors import VirtbenchError
from ..base import EnvSpec, Option
from ..qemu.cmdline.options import CACHES, DISKS, NICS, OPTIONS as QEMU, _size, _timeout, _vcpus, size_bytes

OUTER_MEM_MARGIN = 768 * 2**20   # the outer's kernel, virtbench's Python, the inner's QEMU

OPTIONS = {
    # the inner guest: where benchmarks run
    "accel": Option("auto", choices=("auto", "kvm", "tcg"),
                    help="the inner guest's accelerator, inside the outer; auto = kvm when "
                         "the outer guest has the virtualization extensions, else tcg"),
    "vcpus": Option(1, convert=_vcpus, help="the inner guest's virtual CPUs"),
    "mem": Option("1G", convert=_size, help="the inner guest's memory"),
    "disk": Option("virtio-blk", choices=DISKS, help="bus of the inner guest's scratch disk"),
    "nic": Option("virtio-net", choices=NICS,
                  help="the inner guest's NIC model (it has no network path to this host)"),
    "cache": Option("none", choices=CACHES,
                    help="cache mode of the inner guest's scratch disk in the outer guest"),
    "aio": Option("threads", choices=("threads", "native", "io_uring"),
                  help="I/O engine of the inner guest's scratch disk in the outer guest"),
    "scratch": Option("4G", convert=_size, in_label=False,
                      help="size of the inner guest's scratch disk (the outer guest's, "
                           "passed through)"),
    # the outer guest: booted from the host image, hosting the inner one
    "outer_accel": Option("auto", choices=("auto", "kvm", "tcg"),
                          help="the outer guest's accelerator; auto = kvm when a probe boot "
                               "works here, else tcg"),
    "outer_cpu": Option("auto", help="the outer guest's CPU model; auto = host under kvm, "
                                     "EPYC,+svm (emulated AMD-V) under tcg"),
    "outer_vcpus": Option(2, convert=_vcpus, help="the outer guest's virtual CPUs"),
    "outer_mem": Option("2G", convert=_size,
                        help="the outer guest's memory (the inner's plus at least 768M)"),
    "outer_cache": Option("none", choices=CACHES,
                          help="host cache mode of the outer guest's disk that carries the "
                               "inner guest's scratch disk"),
    "boot_timeout": Option(600.0, convert=_timeout, in_label=False,
                           help="seconds for the whole start: the outer guest's agent "
                                "gets at most 360 of them, each inner boot 30 %"),
}

# the inner guest's qemu options, as the qemu kind names them
INNER = ("accel", "vcpus", "mem", "disk", "nic", "cache", "aio")


def check(values: dict, kind: str = "nested") -> None:
    """What no single option can say: the outer guest must hold the inner one; aio=native
    needs O_DIRECT (as the qemu kind's check)."""
    if size_bytes(values["outer_mem"]) < size_bytes(values["mem"]) + OUTER_MEM_MARGIN:
        raise VirtbenchError(f"environment {kind}: outer_mem={values['outer_mem']} cannot hold "
                             f"an inner guest of mem={values['mem']}; give the outer at least "
                             f"{(size_bytes(values['mem']) + OUTER_MEM_MARGIN) // 2**20}M")
    if values["aio"] == "native" and values["cache"] not in ("none", "directsync"):
        raise VirtbenchError(f"environment {kind}: aio=native needs cache=none or "
                             f"cache=directsync (O_DIRECT), not cache={values['cache']}")


def outer_spec(values: dict, accel: str) -> EnvSpec:
    """The outer guest as a qemu spec: its scratch disk is the inner guest's, on virtio-blk."""
    return EnvSpec("qemu", {
        "accel": accel, "vcpus": str(values["outer_vcpus"]), "mem": values["outer_mem"],
        "scratch": values["scratch"], "cache": values["outer_cache"],
        "boot_timeout": str(min(values["boot_timeout"], QEMU["boot_timeout"].default * 2))})


def inner_boot_timeout(total: float) -> float:
    """Seconds the inner guest's agent gets: 30 % of boot_timeout (at least 60): it boots in
    10-30 s under KVM in the outer guest here, and a boot that hangs is tried once more
    (inside.py) within the whole start's boot_timeout."""
    return round(max(60.0, 0.3 * total), 1)


def inner_spec(values: dict, accel: str) -> EnvSpec:
    """The inner guest as the qemu spec the virtbench inside the outer guest boots."""
    opts = {name: str(values[name]) for name in INNER}
    opts["accel"] = accel
    opts["boot_timeout"] = str(inner_boot_timeout(values["boot_timeout"]))
    return EnvSpec("qemu", opts)
