"""A live migration and a snapshot as their users feel them (pure): QEMU's figures from
`query-migrate`, the guest-observed downtime and the work lost from a guest ticker's lines
as the host received them (vmlife/ticker.py), and a restored guest's clock.

The ticker writes a line every tick; the host stamps each line's arrival on its own clock.
Its guest stops during the migration's last phase, and its own clock stops with it (QEMU
freezes the guest's clocks while its vCPUs are stopped), so the gap is seen from the host:

    downtime_guest_s   the largest gap between consecutive lines' arrivals in the
                       migration's window (its start to its end plus the settle time); the
                       ticker's own largest gap before the migration is given beside it
    work_lost_s        PerfKitBenchmarker's disruption metric: the pages the workload did not
                       write in the window, against what its rate before the migration would
                       have written in as long, in seconds of that rate
"""
from __future__ import annotations

from dataclasses import dataclass

MIB = 2**20


@dataclass
class Tick:
    host_s: float       # when the host received it (its CLOCK_MONOTONIC)
    seq: int
    done: int           # pages written so far
    guest_ns: int       # the guest's CLOCK_MONOTONIC when it was written


def parse_ticks(stamped: list[tuple[float, str]]) -> list[Tick]:
    """(arrival, line) pairs from one or more ports -> ticks in the order written (by seq,
    each seq once: its first arrival), malformed lines dropped (a line cut by the end of a
    connection) (pure)."""
    seen: dict[int, Tick] = {}
    for host_s, line in stamped:
        parts = line.split()
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            continue
        seq, done, guest_ns = (int(p) for p in parts)
        if seq not in seen or host_s < seen[seq].host_s:
            seen[seq] = Tick(host_s, seq, done, guest_ns)
    return [seen[k] for k in sorted(seen)]


def split_lines(chunks: list[tuple[float, bytes]]) -> list[tuple[float, str]]:
    """A socket's chunks, each stamped on arrival -> its complete lines, each stamped with the
    arrival of the chunk that completed it (pure)."""
    out, pending = [], b""
    for t, data in chunks:
        pending += data
        *lines, pending = pending.split(b"\n")
        out += [(t, line.decode("ascii", "replace")) for line in lines]
    return out


def largest_gap(ticks: list[Tick], start: float, end: float) -> tuple[float, float | None]:
    """(the largest gap between consecutive arrivals whose later one falls in [start, end],
    when that gap began); (0.0, None) with fewer than two ticks (pure)."""
    best, at = 0.0, None
    for a, b in zip(ticks, ticks[1:]):
        if start <= b.host_s <= end and b.host_s - a.host_s > best:
            best, at = b.host_s - a.host_s, a.host_s
    return best, at


def done_at(ticks: list[Tick], t: float) -> int | None:
    """Pages written by the last tick the host had received at `t` (pure)."""
    done = None
    for tick in ticks:
        if tick.host_s > t:
            break
        done = tick.done
    return done


def rate(ticks: list[Tick], start: float, end: float) -> float | None:
    """Pages per second of host time between the first and last tick in [start, end]."""
    inside = [t for t in ticks if start <= t.host_s <= end]
    if len(inside) < 2 or inside[-1].host_s <= inside[0].host_s:
        return None
    return (inside[-1].done - inside[0].done) / (inside[-1].host_s - inside[0].host_s)


@dataclass
class Disruption:
    downtime_guest_s: float
    gap_at_s: float | None
    baseline_gap_s: float
    rate_pages_s: float | None
    work_lost_s: float | None
    expected_pages: float | None
    done_pages: int | None


def disruption(ticks: list[Tick], before: tuple[float, float],
               window: tuple[float, float]) -> Disruption:
    """What the migration cost the ticker's workload: the largest arrival gap in `window`
    (start, end on the host's clock), the largest before it in `before`, and the work lost
    in the window at the rate measured in `before` (pure)."""
    gap, at = largest_gap(ticks, *window)
    base_gap, _ = largest_gap(ticks, *before)
    r = rate(ticks, *before)
    lost = expected = done = None
    d0, d1 = done_at(ticks, window[0]), done_at(ticks, window[1])
    if r and d0 is not None and d1 is not None:
        expected = r * (window[1] - window[0])
        done = d1 - d0
        lost = max(0.0, (expected - done) / r)
    return Disruption(gap, at, base_gap, r, lost, expected, done)


def migration_figures(reply: dict) -> dict[str, float]:
    """`query-migrate`'s reply on the source once it completed -> figures (pure): total,
    downtime and setup time (s), bytes transferred (MiB), the dirty rate QEMU measured
    (MiB/s), passes over memory, throughput (MiB/s)."""
    ram = reply.get("ram") or {}
    out: dict[str, float] = {}
    for key, name in (("total-time", "total_s"), ("downtime", "downtime_s"),
                      ("setup-time", "setup_s")):
        if isinstance(reply.get(key), (int, float)):
            out[name] = reply[key] / 1000.0
    page = ram.get("page-size") or 4096
    if isinstance(ram.get("transferred"), (int, float)):
        out["transferred_mib"] = ram["transferred"] / MIB
    if isinstance(ram.get("dirty-pages-rate"), (int, float)):
        out["dirty_rate_mib_s"] = ram["dirty-pages-rate"] * page / MIB
    if isinstance(ram.get("dirty-sync-count"), (int, float)):
        out["passes"] = float(ram["dirty-sync-count"])
    if isinstance(ram.get("mbps"), (int, float)):
        out["throughput_mib_s"] = ram["mbps"] * 1e6 / 8 / MIB
    return out


def clock_lag(before: tuple[float, float], after: tuple[float, float]) -> float:
    """How far the guest's wall clock fell behind the host's between two (host, guest)
    readings of CLOCK_REALTIME (pure): positive = the guest is now further behind."""
    return (after[0] - after[1]) - (before[0] - before[1])


def clock_rate(first: tuple[float, float], second: tuple[float, float]) -> float | None:
    """The guest's clock's rate against the host's between two (host, guest) readings of
    CLOCK_MONOTONIC (pure): 1.0 = it keeps time."""
    host = second[0] - first[0]
    return (second[1] - first[1]) / host if host > 0 else None
