"""How much host memory a guest or a sandbox takes: its processes' PSS and USS, the guest's
RAM the host actually backs, and the VMM's own overhead; with the host's KSM and
transparent-huge-page state, which change all of them (docs/lifecycle.md).

    pss        sum over its host processes of Pss (/proc/PID/smaps_rollup): each page
               divided by the number of processes sharing it
    uss        Private_Clean + Private_Dirty (+ Private_Hugetlb): what ending it would free
    rss        Rss (shared pages counted whole)
    guest_resident   the guest's RAM the host backs: Rss of the VMM's guest-RAM mapping
               (a VM), of the sandbox's memory file (gVisor), of the container's own
               processes' PSS (a container: its workload is its memory)
    overhead   pss minus the guest's part (its Pss): the VMM's or the sandbox's own cost
    tcg_buffer Rss of TCG's translation cache (an rwx anonymous mapping): part of a TCG
               guest's overhead, absent under KVM

Parsers are pure (tested on real /proc files captured here); readers of /proc are at the
bottom.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

MIB = 2**20
_HEADER = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s*(.*)$")
_FIELD = re.compile(r"^(\w+):\s+(\d+) kB$")


def parse_rollup(text: str) -> dict[str, int]:
    """/proc/PID/smaps_rollup (or one mapping's block of smaps) -> {field: bytes} (pure)."""
    out = {}
    for line in text.splitlines():
        m = _FIELD.match(line.strip())
        if m:
            out[m.group(1)] = int(m.group(2)) * 1024
    if "Pss" not in out:
        raise ValueError("not an smaps_rollup: no Pss line")
    return out


def uss(fields: dict[str, int]) -> int:
    """The unique set size: the pages only this process maps (pure)."""
    return (fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)
            + fields.get("Private_Hugetlb", 0))


@dataclass
class Mapping:
    start: int
    end: int
    perms: str
    path: str
    fields: dict[str, int] = field(default_factory=dict)

    @property
    def anonymous(self) -> bool:
        return self.path == ""

    def get(self, name: str) -> int:
        return self.fields.get(name, 0)


def parse_smaps(text: str) -> list[Mapping]:
    """/proc/PID/smaps -> its mappings with their fields in bytes (pure)."""
    out: list[Mapping] = []
    for line in text.splitlines():
        head = _HEADER.match(line)
        if head:
            out.append(Mapping(int(head.group(1), 16), int(head.group(2), 16), head.group(3),
                               head.group(4).strip()))
            continue
        m = _FIELD.match(line.strip())
        if m and out:
            out[-1].fields[m.group(1)] = int(m.group(2)) * 1024
    return out


def guest_ram(mappings: list[Mapping], size: int, slack: int = 4 * MIB) -> list[Mapping]:
    """The VMM's mapping(s) of the guest's RAM block of `size` bytes (pure): anonymous,
    read-write, not executable, `size` to `size + slack` long (QEMU aligns the block), or a
    run of adjacent such mappings of that total (a VMA split by madvise). [] if none."""
    def fits(m: Mapping) -> bool:
        return m.anonymous and m.perms.startswith("rw") and "x" not in m.perms
    best: list[Mapping] = []
    run: list[Mapping] = []
    for m in mappings:
        if not fits(m):
            run = []
            continue
        run = run + [m] if run and run[-1].end == m.start else [m]
        while run and run[-1].end - run[0].start > size + slack:
            run = run[1:]
        total = run[-1].end - run[0].start if run else 0
        if size <= total <= size + slack and not best:
            best = list(run)
    return best


def memfd_ram(mappings: list[Mapping], name: str) -> list[Mapping]:
    """The mappings of a memory file `name` (gVisor's sentry maps its application memory
    from a memfd: `/memfd:runsc-memory (deleted)`) (pure)."""
    return [m for m in mappings if m.path.startswith(f"/memfd:{name}")]


def tcg_buffer(mappings: list[Mapping]) -> list[Mapping]:
    """TCG's translation cache: anonymous rwx mappings (pure)."""
    return [m for m in mappings if m.anonymous and m.perms.startswith("rwx")]


@dataclass
class Footprint:
    """One guest's or sandbox's host memory, in bytes; `detail` says what was read."""

    pss: int
    uss: int
    rss: int
    guest_resident: int | None
    guest_pss: int | None
    tcg_buffer: int = 0
    swap: int = 0
    anon_huge: int = 0
    detail: dict = field(default_factory=dict)

    @property
    def overhead(self) -> int | None:
        return None if self.guest_pss is None else self.pss - self.guest_pss

    def values(self) -> dict[str, float]:
        """The footprint benchmark's metrics, in MiB."""
        out = {"pss_mib": self.pss / MIB, "uss_mib": self.uss / MIB, "rss_mib": self.rss / MIB}
        if self.guest_resident is not None:
            out["guest_resident_mib"] = self.guest_resident / MIB
        if self.overhead is not None:
            out["overhead_mib"] = self.overhead / MIB
            if self.tcg_buffer:
                out["overhead_no_tcg_mib"] = (self.overhead - self.tcg_buffer) / MIB
        return out


def combine(rollups: list[dict[str, int]], guest: list[Mapping] | None,
            guest_pss: int | None = None, tcg: list[Mapping] | None = None,
            detail: dict | None = None) -> Footprint:
    """The processes' rollups and the guest's part (its mappings, or its PSS when that is
    whole processes: a container's workload) as a Footprint (pure)."""
    total = {k: sum(r.get(k, 0) for r in rollups)
             for k in ("Pss", "Rss", "Swap", "AnonHugePages")}
    resident = None
    if guest is not None:
        resident = sum(m.get("Rss") for m in guest)
        guest_pss = sum(m.get("Pss") for m in guest)
    elif guest_pss is not None:
        resident = guest_pss
    return Footprint(pss=total["Pss"], uss=sum(uss(r) for r in rollups), rss=total["Rss"],
                     guest_resident=resident, guest_pss=guest_pss,
                     tcg_buffer=sum(m.get("Rss") for m in (tcg or [])), swap=total["Swap"],
                     anon_huge=total["AnonHugePages"], detail=dict(detail or {}))


# -- the host's state, and /proc (side effects) -------------------------------------------
def parse_thp(text: str) -> str:
    """`always [madvise] never` -> "madvise" (pure)."""
    m = re.search(r"\[(\w+)\]", text)
    return m.group(1) if m else text.strip()


def host_state(root: Path = Path("/sys/kernel/mm")) -> dict:
    """KSM (running? pages shared and sharing) and THP (enabled, defrag) on this host."""
    def read(rel: str) -> str | None:
        try:
            return (root / rel).read_text().strip()
        except OSError:
            return None
    ksm = {k: read(f"ksm/{k}") for k in ("run", "pages_shared", "pages_sharing")}
    thp = {k: read(f"transparent_hugepage/{k}") for k in ("enabled", "defrag")}
    return {"ksm_run": ksm["run"], "ksm_pages_shared": ksm["pages_shared"],
            "ksm_pages_sharing": ksm["pages_sharing"],
            "thp_enabled": parse_thp(thp["enabled"]) if thp["enabled"] else None,
            "thp_defrag": parse_thp(thp["defrag"]) if thp["defrag"] else None}


def read_rollup(pid: int) -> dict[str, int]:
    return parse_rollup(Path(f"/proc/{pid}/smaps_rollup").read_text())


def read_smaps(pid: int) -> list[Mapping]:
    return parse_smaps(Path(f"/proc/{pid}/smaps").read_text())


def process_tree(root: int) -> list[int]:
    """`root` and every process below it (from /proc/*/stat's parent ids), root first."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop(0)
        out.append(pid)
        todo += sorted(children.get(pid, []))
    return out


def process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def vmm_footprint(pid: int, ram_bytes: int) -> Footprint:
    """A VMM process's footprint, its guest RAM found by size (guest_ram)."""
    rollup = read_rollup(pid)
    maps = read_smaps(pid)
    ram = guest_ram(maps, ram_bytes)
    detail = {"processes": [{"pid": pid, "name": process_name(pid), "pss": rollup["Pss"]}],
              "guest_ram_bytes": ram_bytes, "guest_ram_mappings": len(ram),
              "host": host_state(), "ksm_bytes": rollup.get("KSM", 0)}
    if not ram:
        detail["guest_ram_note"] = (f"no anonymous rw mapping of {ram_bytes} bytes: the "
                                    "guest's part and the overhead are not known")
    return combine([rollup], ram or None, tcg=tcg_buffer(maps), detail=detail)


def sandbox_footprint(root: int, workload: int, memory_file: str | None = None) -> Footprint:
    """A container's or sandbox's footprint: every process from `root` (podman's conmon)
    down. Its guest part: the sandbox's memory file's pages where it has one (gVisor's
    `runsc-memory`, mapped by the sentry and its stubs: their Pss summed counts each page
    once), else the workload's own processes (`workload` and below: a container's)."""
    tree = process_tree(root)
    rollups, names, guest_pss = [], [], 0
    workload_tree = set(process_tree(workload)) if memory_file is None else set()
    for pid in tree:
        try:
            rollup = read_rollup(pid)
            if memory_file is not None:
                guest_pss += sum(m.get("Pss") for m in memfd_ram(read_smaps(pid), memory_file))
        except OSError:
            continue                      # a process that ended meanwhile
        rollups.append(rollup)
        names.append({"pid": pid, "name": process_name(pid), "pss": rollup["Pss"]})
        if pid in workload_tree:
            guest_pss += rollup["Pss"]
    detail = {"processes": names, "host": host_state(),
              "guest_part": f"the memory file {memory_file}" if memory_file
              else "the container's own processes"}
    return combine(rollups, None, guest_pss=guest_pss, detail=detail)
