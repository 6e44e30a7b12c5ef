"""Starting a group's instances together, trial after trial (no I/O: the group does that).

For a benchmark whose tool stamps its blocks, every instance is given one moment to start
(`lead` seconds ahead, on its own clock); a tool of several blocks (stream's passes,
`slotted`) is also given a slot per block, so that instances with no barrier between them
run each block side by side as stream's processes do with theirs. Both are learnt from the
trials: the lead grows when an instance was ready late, the slot is 1.5 x the longest block
of the last trial (plus the clocks' bound and a margin). The first trial of a slotted tool
(the warm-up, by default) runs without slots and measures them.

After each trial, `review` says what it stores in trials.detail and warns, once per
benchmark, when the instances did not run the block the aggregate uses side by side (their
starts more than 5 % of its interval apart) or when the clocks' bound is more than 1 % of
the shortest common interval.
"""
from __future__ import annotations

from ...foundations.stats.aggregate import ClockOffset, Span, Timing, common_rate, makespan, transpose

START_LEAD_S = 1.0        # instances start this long after they are told, at first
MAX_LEAD_S = 120.0        # ... growing (x1.5 past the lateness seen) up to this
LATE_SHARE = 0.1          # an instance ready later than this share of the lead grows it
SLOT_HEADROOM = 1.5       # a slot is this many times the longest block of the last trial
SLOT_MARGIN_S = 0.002     # ... plus the clocks' bound and this (a sleeper's wake-up)
APART_SHARE = 0.05        # warn when the best block's starts are this share of its interval
CLOCK_WARN_SHARE = 0.01   # warn when the clocks' bound is this share of the interval


def slot_for(spans: dict[str, list[list[Span]]], bound_s: float) -> float | None:
    """The slot for the next trial: SLOT_HEADROOM x the longest block any instance took in
    this one, plus the clocks' bound and a margin (pure); None without blocks."""
    longest = max((s.end - s.start for per_instance in spans.values()
                   for blocks in per_instance for s in blocks), default=None)
    if longest is None:
        return None
    return SLOT_HEADROOM * longest + bound_s + SLOT_MARGIN_S


def worst_apart(spans: dict[str, list[list[Span]]], higher_is_better: dict[str, bool]):
    """(share, skew_s, interval_s, metric) of the metric whose aggregate's block began most
    apart, as a share of that block's common interval (pure); None without blocks."""
    worst = None
    for name, per_instance in spans.items():
        try:
            blocks = transpose(per_instance)
        except ValueError:
            continue
        best = common_rate(blocks) if higher_is_better.get(name, True) else makespan(blocks)
        share = best.skew_s / best.interval_s if best.interval_s > 0 else 0.0
        if worst is None or share > worst[0]:
            worst = (share, best.skew_s, best.interval_s, name)
    return worst


def shortest_interval(spans: dict[str, list[list[Span]]]) -> float | None:
    """The shortest common interval of any block of any metric (pure); None without any."""
    shortest = None
    for per_instance in spans.values():
        try:
            blocks = transpose(per_instance)
        except ValueError:
            continue
        for block in blocks:
            interval = max(s.end for s in block) - min(s.start for s in block)
            shortest = interval if shortest is None else min(shortest, interval)
    return shortest


class Together:
    """A group's lead and slot per benchmark, and the warnings it has given."""

    def __init__(self):
        self.lead: dict[str, float] = {}
        self.slot: dict[str, float] = {}
        self.warned: set[tuple[str, str]] = set()

    def plan(self, bench) -> tuple[float, float | None]:
        """(lead, slot) for the next trial of `bench` (slot None: none yet, or not slotted)."""
        slot = self.slot.get(bench.name) if getattr(bench, "slotted", False) else None
        return self.lead.get(bench.name, START_LEAD_S), slot

    def review(self, bench, timings: list[Timing | None], clocks: list[ClockOffset],
               spans: dict[str, list[list[Span]]], lead: float,
               slot: float | None) -> tuple[dict, list[tuple[str, str]]]:
        """(detail to store with the trial, warnings) after a successful trial; learns the
        next trial's lead and slot."""
        late = [t.late_s if t is not None else None for t in timings]
        slot_late = [t.slot_late_s if t is not None else None for t in timings]
        bound = 2 * max(c.uncertainty_s for c in clocks)       # a start and an end, each ± u
        shortest = shortest_interval(spans)
        detail = {"start_lead_s": lead, "slot_s": slot, "late_s": late,
                  "slot_late_s": slot_late if getattr(bench, "slotted", False) else None,
                  "shortest_interval_s": shortest,
                  "clocks": [{"instance": i, "offset_s": c.offset_s,
                              "uncertainty_s": c.uncertainty_s} for i, c in enumerate(clocks)]}
        warnings: list[tuple[str, str]] = []
        notes = []
        worst_late, who = max((x or 0.0, i) for i, x in enumerate(late))
        if worst_late > LATE_SHARE * lead:
            self.lead[bench.name] = min(MAX_LEAD_S, (lead + worst_late) * 1.5)
            notes.append(f"instance {who} was ready {worst_late:.3f} s after the start it was "
                         f"given ({lead:.1f} s ahead); later trials are given "
                         f"{self.lead[bench.name]:.1f} s")
        if getattr(bench, "slotted", False):
            new = slot_for(spans, bound)
            if new is not None:
                self.slot[bench.name] = new
        apart = worst_apart(spans, {m.name: m.higher_is_better for m in bench.metrics})
        calibrating = getattr(bench, "slotted", False) and slot is None
        if apart and apart[0] > APART_SHARE and not calibrating:
            share, skew, interval, metric = apart
            warnings += self._once(
                "instances_apart", bench.name,
                f"in the block {metric}'s aggregate rests on, the instances started "
                f"{skew * 1e3:.2f} ms apart, {share:.0%} of its common interval "
                f"({interval * 1e3:.2f} ms): they did not run it side by side, and the "
                "aggregate is lower for it" + "".join(f"; {n}" for n in notes))
        if shortest and bound > CLOCK_WARN_SHARE * shortest:
            warnings += self._once(
                "clock_uncertainty", bench.name,
                f"the instances' clocks are mapped onto the host's to within "
                f"±{bound / 2 * 1e3:.3f} ms, {bound / shortest:.1%} of the shortest common "
                f"interval ({shortest * 1e3:.2f} ms): the aggregate may be off by that much; "
                "larger sizes make it smaller")
        return detail, warnings

    def _once(self, kind: str, bench: str, message: str) -> list[tuple[str, str]]:
        if (kind, bench) in self.warned:
            return []
        self.warned.add((kind, bench))
        return [(kind, message)]
