"""Pinning (`pin = auto|off`): our kernels on bare metal and each guest's vCPU threads get
host CPUs of their own, so the scheduler does not move them between trials.

An environment says what to pin with `pin_threads(bench, params)`: (thread or process id,
CPUs it needs) pairs, e.g. one per vCPU thread of a guest (all instances of a group at once:
they run together, so their CPUs must not overlap), or the native agent with the kernel's
process count (the kernel's processes inherit the agent's affinity). The first host CPU is
left to virtbench and QEMU's own threads when there are more CPUs than needed.
"""
from __future__ import annotations

import os


def host_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))


def assign(cpus: list[int], needs: list[int]) -> list[list[int]] | None:
    """Pure: disjoint CPU sets for each need, in order; None when the host has too few."""
    total = sum(needs)
    if total <= 0:
        return []
    if total < len(cpus):
        pool = cpus[1:]            # keep the first CPU for virtbench and QEMU's other threads
    elif total == len(cpus):
        pool = list(cpus)
    else:
        return None
    out, i = [], 0
    for n in needs:
        out.append(pool[i:i + n])
        i += n
    return out


def vcpu_threads(reply: list[dict]) -> list[int]:
    """Pure: QMP query-cpus-fast's return -> vCPU thread ids in vCPU order."""
    return [c["thread-id"] for c in sorted(reply, key=lambda c: c.get("cpu-index", 0))]


def apply(threads: list[tuple[int, int]], cpus: list[int]) -> tuple[list[list[int]] | None, str]:
    """Pin each thread to its own CPUs; when they do not fit, release them to every CPU and
    say why. Returns (the sets used or None, why not pinned)."""
    free = [(tid, n) for tid, n in threads if n <= 0]      # any CPU: not what we pin
    pinned = [(tid, n) for tid, n in threads if n > 0]
    release(free, cpus)
    sets = assign(cpus, [n for _, n in pinned])
    if sets is None:
        need = sum(n for _, n in pinned)
        release(pinned, cpus)
        return None, (f"needs {need} host CPU(s) of its own, the host has {len(cpus)}; "
                      "running unpinned")
    for (tid, _), chosen in zip(pinned, sets):
        _set(tid, chosen)
    return sets, ""


def release(threads: list[tuple[int, int]], cpus: list[int]) -> None:
    for tid, _ in threads:
        _set(tid, cpus)


def set_cpus(tid: int, cpus: list[int]) -> None:
    """Pin one thread or process to `cpus` (gone already: nothing to do)."""
    _set(tid, cpus)


def _set(tid: int, cpus: list[int]) -> None:
    try:
        os.sched_setaffinity(tid, cpus)
    except ProcessLookupError:
        pass                     # gone: the trial will say so
