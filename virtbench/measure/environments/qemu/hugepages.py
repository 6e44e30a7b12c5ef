"""Huge pages for guest RAM (`hugepages=on`): the 2 MiB pages a guest needs, reserved in the
host's pool for the run and given back after it.

The pool is /sys/kernel/mm/hugepages/hugepages-2048kB. reserve() raises nr_hugepages by what
the free pages lack (none when enough are free) and returns how many it added; release()
lowers it by that many again. The count added goes into the guest's manifest, so the
guardian gives it back when virtbench is killed (guardian.release_hugepages). Pages a QEMU
still holds when the pool is lowered become surplus pages and return to the kernel when it
exits. The arithmetic is pure (pages_for, shortfall, parse_meminfo), tested directly.
"""
from __future__ import annotations

import re
from pathlib import Path

from ....core.errors import EnvironmentUnusable

PAGE_BYTES = 2 * 2**20
POOL = Path("/sys/kernel/mm/hugepages/hugepages-2048kB")


def pages_for(mem_bytes: int) -> int:
    """2 MiB pages that hold `mem_bytes` of guest RAM."""
    return -(-mem_bytes // PAGE_BYTES)


def shortfall(needed: int, free: int, reserved: int) -> int:
    """Pages the pool lacks: free pages already promised to a mapping (resv_hugepages) are
    not free for us."""
    return max(0, needed - max(0, free - reserved))


def parse_meminfo(text: str) -> dict[str, int]:
    """/proc/meminfo -> {"HugePages_Total": n, ..., "Hugepagesize": kB, "Hugetlb": kB}."""
    out = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key.startswith("HugePages_") or key in ("Hugepagesize", "Hugetlb", "MemAvailable"):
            words = rest.split()
            if words and words[0].isdigit():
                out[key] = int(words[0])
    return out


def _read(name: str, pool: Path) -> int:
    return int((pool / name).read_text().split()[0])


def check(mem_bytes: int, pool: Path = POOL, meminfo: Path = Path("/proc/meminfo")) -> None:
    """Before the run: is a pool of 2 MiB pages there, ours to resize, and is there memory
    for the pages the guest needs? One line naming the problem otherwise."""
    if not (pool / "nr_hugepages").exists():
        raise EnvironmentUnusable("environment qemu: hugepages=on needs 2 MiB huge pages, and "
                                  f"this kernel has no {pool} (no hugetlbfs); use hugepages=off")
    need = pages_for(mem_bytes)
    lack = shortfall(need, _read("free_hugepages", pool), _read("resv_hugepages", pool))
    avail_kb = parse_meminfo(meminfo.read_text()).get("MemAvailable", 0)
    if lack * PAGE_BYTES > avail_kb * 1024:
        raise EnvironmentUnusable(
            f"environment qemu: hugepages=on needs {need} free 2 MiB pages, {lack} more than "
            f"the pool has, and only {avail_kb // 1024} MiB of memory is available; free "
            "memory or use a smaller mem=")


def reserve(mem_bytes: int, pool: Path = POOL) -> int:
    """Grow the pool so that the guest's pages are free; returns the pages added (0 when
    enough were free). If the kernel cannot give them all (fragmented memory), the pool is
    put back as it was and the error says how many it gave."""
    need = pages_for(mem_bytes)
    before = _read("nr_hugepages", pool)
    lack = shortfall(need, _read("free_hugepages", pool), _read("resv_hugepages", pool))
    if not lack:
        return 0
    nr = pool / "nr_hugepages"
    try:
        nr.write_text(str(before + lack))
    except OSError as exc:
        raise EnvironmentUnusable(f"environment qemu: hugepages=on: cannot grow {nr} "
                                  f"({exc.strerror}); run as root, or reserve {need} pages "
                                  "before the run") from None
    got = _read("nr_hugepages", pool) - before
    if got < lack:
        nr.write_text(str(before))
        raise EnvironmentUnusable(
            f"environment qemu: hugepages=on needs {lack} more 2 MiB pages and the kernel "
            f"gave {got} (memory too fragmented); retry after `echo 1 > "
            "/proc/sys/vm/compact_memory`, or use hugepages=off")
    return lack


def host_thp(path: Path = Path("/sys/kernel/mm/transparent_hugepage/enabled")) -> str | None:
    """The host's transparent huge page mode ("madvise" of "always [madvise] never")."""
    try:
        m = re.search(r"\[([a-z]+)\]", path.read_text())
    except OSError:
        return None
    return m.group(1) if m else None


def release(added: int, pool: Path = POOL) -> None:
    """Give back the pages reserve() added (quiet when the pool is gone or smaller)."""
    if added <= 0:
        return
    try:
        now = _read("nr_hugepages", pool)
        (pool / "nr_hugepages").write_text(str(max(0, now - added)))
    except (OSError, ValueError):
        pass
