"""How much an environment (or a group of instances) can hold: pure checks, host facts."""
from __future__ import annotations

import os

from ...machinery.machine import meminfo


def memory_refusal(label: str, n: int, need: int, available: int | None, shared: bool,
                   what: str) -> str | None:
    """Why `n` instances cannot each get the `need` bytes `what` uses, or None (pure).
    `shared`: the instances share `available` (native processes on one host); otherwise each
    instance has `available` of its own (a guest's RAM)."""
    if need <= 0 or available is None:
        return None
    total = need * n if shared else need
    if total <= available:
        return None
    gib = 2**30
    if n == 1:
        return (f"environment {label}: {what} needs {need / gib:.2f} GiB, more than the "
                f"{available / gib:.2f} GiB available there; lower the benchmark's size"
                f"{'' if shared else ' (or give the guest more mem)'}")
    if shared:
        return (f"environment {label}: {n} instances x {need / gib:.2f} GiB for {what} need "
                f"{total / gib:.2f} GiB, more than the {available / gib:.2f} GiB the host has "
                f"available; lower instances to {max(available // need, 0)} or the benchmark's size")
    return (f"environment {label}: {what} needs {need / gib:.2f} GiB per instance, more than "
            f"each instance's {available / gib:.2f} GiB; raise mem or lower the benchmark's size")


# the host keeps this much beyond the twin's RAM (QEMU itself, TCG's translation cache, the page cache)
TWIN_HEADROOM = 512 * 2**20


def twin_memory_refusal(label: str, need: int, available: int | None) -> str | None:
    """Why a profiling twin needing `need` bytes of guest RAM does not fit in `available`
    (pure); None when it fits or the host does not say."""
    if available is None or need + TWIN_HEADROOM <= available:
        return None
    gib = 2**30
    return (f"{label}: its profiling twin needs {need / gib:.2f} GiB (+{TWIN_HEADROOM / gib:.1f} GiB "
            f"for QEMU) beside the paused guest, more than the {available / gib:.2f} GiB available; "
            "lower mem or profile with fewer guests running")


def host_capacity() -> tuple[int, int]:
    """(cores, memory bytes) of this host."""
    return os.cpu_count() or 1, meminfo.host_total() or 0
