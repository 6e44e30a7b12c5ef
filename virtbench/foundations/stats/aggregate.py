"""One definition of the aggregate of several workers measured at once (pure).

STREAM's threaded form, our stream kernel's `processes = N` and a group of instances
(`instances = N`) all report the same thing for a throughput: the work every worker did in
one block (a pass of a kernel, a whole measured run), divided by ONE common interval, from the
earliest start of any worker to the latest end of any, on one clock; the best block when
there are several (the first of stream's passes is a warm-up and is not given here). Not a
sum of each worker's own best rate, which may come from different moments.

For a time (lower is better), the same interval is the makespan: from the first start to
the last end.

The workers' stamps must be on one clock: a group maps each instance's CLOCK_MONOTONIC onto
the host's with the offset its agent's clock showed (see ClockOffset), to within the round
trip it was measured in.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

MIN_INTERVAL_S = 1e-9      # a coarse clock's zero-length interval (the kernels' own guard)


@dataclass(frozen=True)
class Span:
    """One worker's part of one block: when it started and ended, and the work it did
    (bytes / 1e6 for MB/s, MFLOP for MFLOPS; 0 for a time)."""

    start: float
    end: float
    work: float = 0.0


@dataclass(frozen=True)
class Common:
    """The aggregate of one block or the best of several."""

    value: float         # work per second over the interval (a rate), or the interval (a time)
    interval_s: float    # the common interval: earliest start to latest end
    block: int           # which block (0-based among those given)
    skew_s: float        # latest start - earliest start in that block: how far apart they began


def common_interval(spans: Sequence[Span]) -> float:
    """Earliest start to latest end of one block's spans."""
    return max(s.end for s in spans) - min(s.start for s in spans)


def _block(spans: Sequence[Span], i: int, rate: bool) -> Common:
    if not spans:
        raise ValueError("a block without workers")
    interval = common_interval(spans)
    skew = max(s.start for s in spans) - min(s.start for s in spans)
    if not rate:
        return Common(interval, interval, i, skew)
    return Common(sum(s.work for s in spans) / max(interval, MIN_INTERVAL_S), interval, i, skew)


def common_rate(blocks: Sequence[Sequence[Span]]) -> Common:
    """The best block's work of all workers over its one common interval."""
    if not blocks:
        raise ValueError("no blocks")
    return max((_block(b, i, True) for i, b in enumerate(blocks)), key=lambda c: c.value)


def makespan(blocks: Sequence[Sequence[Span]]) -> Common:
    """The shortest block's first start to last end (one block: the makespan of the run)."""
    if not blocks:
        raise ValueError("no blocks")
    return min((_block(b, i, False) for i, b in enumerate(blocks)), key=lambda c: c.value)


def transpose(per_worker: Sequence[Sequence[Span]]) -> list[list[Span]]:
    """Each worker's spans, one per block -> each block's spans, one per worker. Every
    worker must have the same number of blocks (ValueError otherwise)."""
    counts = {len(w) for w in per_worker}
    if len(counts) != 1:
        raise ValueError(f"workers report different numbers of blocks: {sorted(counts)}")
    return [list(block) for block in zip(*per_worker)]


@dataclass(frozen=True)
class Timing:
    """What one worker's output says of its blocks: per metric, one Span per block on the
    worker's own clock (blocks that count only: a warm-up pass is left out); with --start-at
    how late it was ready to start, and with --slot how late its latest block began."""

    spans: dict[str, list[Span]]
    late_s: float | None = None
    slot_late_s: float | None = None


# -- clocks --------------------------------------------------------------------------------
@dataclass(frozen=True)
class ClockOffset:
    """A worker's clock minus the host's: t_host = t_worker - offset, to within ±uncertainty."""

    offset_s: float
    uncertainty_s: float


def offset_from_ping(sent: float, answered_at: float, received: float) -> ClockOffset:
    """The worker said its clock read `answered_at` between the host's `sent` and `received`:
    it is the host's midpoint to within half the round trip."""
    half = (received - sent) / 2
    return ClockOffset(answered_at - (sent + half), half)


def best_offset(samples: Sequence[ClockOffset]) -> ClockOffset:
    """The sample with the shortest round trip (the tightest bound), as NTP filters."""
    return min(samples, key=lambda o: o.uncertainty_s)


def across(before: ClockOffset, after: ClockOffset) -> ClockOffset:
    """One offset for a trial bracketed by two measurements: their mean, its uncertainty the
    larger bound plus half the drift between them."""
    drift = abs(after.offset_s - before.offset_s)
    return ClockOffset((before.offset_s + after.offset_s) / 2,
                       max(before.uncertainty_s, after.uncertainty_s) + drift / 2)


def to_host(spans: Sequence[Span], clock: ClockOffset) -> list[Span]:
    return [Span(s.start - clock.offset_s, s.end - clock.offset_s, s.work) for s in spans]
