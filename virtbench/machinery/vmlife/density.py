"""Consolidation density (pure): a step's throughput figures from its samples, and where a
sweep of ever more guests stopped scaling (its knee) and why (docs/lifecycle.md).

A step runs N guests at once, each trial in all of them at the same moment
(`instances = N`, docs/instances-and-limits.md). Everything here is a throughput, higher
is better: a rate as the benchmark gives it (stream's MB/s); a job's time (cyclepi's
seconds) as jobs per second, a guest's 1 / its seconds and the group's N / its makespan.

The quality-of-service rule (Rule), judged step by step against the single guest (the
first step) and the best step so far:

    qos             the slowest guest's throughput fell under `per_guest_floor` of the
                    single guest's (VMmark's and SPECvirt's tiles: a tile that misses its
                    quality of service ends the run)
    aggregate_flat  the aggregate did not rise by at least `min_gain` over the best step so
                    far: another guest bought no more work

The knee is the last count before the rule failed: the most guests this host runs with
every guest served and the aggregate still rising. A sweep that ends for another reason
(its maximum, its time, the host's memory, a failed step) says so in its own stop reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...core.defaults import DENSITY_FLOOR, DENSITY_MIN_GAIN
from ...foundations.stats.describe import bootstrap_ci, trimmed_mean

STOP_REASONS = {
    "qos": "a guest's throughput fell under the floor",
    "aggregate_flat": "the aggregate stopped rising",
    "max": "the maximum count was reached",
    "time": "the sweep's time ran out",
    "memory": "the next step would not fit the host's available memory",
    "failed": "a step's trials failed",
    "interrupted": "it was interrupted (Ctrl-C); the steps that finished are kept",
}


@dataclass(frozen=True)
class Rule:
    """When a step breaks quality of service (module docstring)."""

    per_guest_floor: float = DENSITY_FLOOR   # share of the single guest's throughput each keeps
    min_gain: float = DENSITY_MIN_GAIN       # share of the best aggregate a step must add

    def __post_init__(self):
        if not 0 < self.per_guest_floor <= 1:
            raise ValueError("the per-guest floor is a share from 0 to 1 (e.g. 0.5)")
        if not 0 <= self.min_gain < 1:
            raise ValueError("the aggregate's minimum gain is a share from 0 to 1 (e.g. 0.05)")


@dataclass
class Figure:
    """A throughput's trimmed mean (the published method) and its 95 % bootstrap CI."""

    mean: float
    ci_low: float | None
    ci_high: float | None
    n: int


@dataclass
class Step:
    """N guests at once: the group's throughput, each guest's, and how fairly they shared."""

    count: int
    aggregate: Figure
    per_guest: list[Figure]
    run_id: str = ""
    detail: dict = field(default_factory=dict)

    @property
    def slowest(self) -> float:
        return min(g.mean for g in self.per_guest)

    @property
    def fairness(self) -> float | None:
        return jain([g.mean for g in self.per_guest])


@dataclass
class Knee:
    """Where the sweep stopped scaling: the knee (a count; None when even one guest failed)
    and the rule that ended it (None: it still scaled at its last step)."""

    knee: int | None
    stop_reason: str | None
    why: str = ""


def throughputs(samples: list[float], higher_is_better: bool, jobs: int = 1) -> list[float]:
    """A metric's samples as throughputs: a rate as it is; a time as `jobs` per that time
    (a guest: 1 job; a group's makespan: N jobs). A time of 0 or less is no sample."""
    if higher_is_better:
        return [float(x) for x in samples]
    return [jobs / x for x in samples if x > 0]


def figure(values: list[float], seed: int = 0) -> Figure:
    """The trimmed mean and 95 % bootstrap CI of a step's throughputs."""
    if not values:
        raise ValueError("a step's figure needs at least one sample")
    lo, hi = bootstrap_ci(values, seed=seed) if len(values) > 1 else (None, None)
    return Figure(float(trimmed_mean(values)), None if lo is None else float(lo),
                  None if hi is None else float(hi), len(values))


def jain(values: list[float]) -> float | None:
    """Jain's fairness index: 1 when all are equal, 1/N when one takes everything."""
    if not values or sum(v * v for v in values) == 0:
        return None
    return sum(values) ** 2 / (len(values) * sum(v * v for v in values))


def judge(steps: list[Step], rule: Rule = Rule()) -> Knee:
    """Where the rule first failed along steps (in count order; the first is the single
    guest's reference) and the knee before it."""
    if not steps:
        return Knee(None, None, "no step was measured")
    steps = sorted(steps, key=lambda s: s.count)
    single = steps[0].slowest
    best = steps[0]
    for step in steps[1:]:
        share = step.slowest / single if single else 0.0
        if share < rule.per_guest_floor:
            return Knee(best.count, "qos", (
                f"at {step.count} guests the slowest guest did {share:.0%} of one guest "
                f"alone, under the floor of {rule.per_guest_floor:.0%}"))
        gain = step.aggregate.mean / best.aggregate.mean - 1 if best.aggregate.mean else 0.0
        if gain < rule.min_gain:
            return Knee(best.count, "aggregate_flat", (
                f"at {step.count} guests the aggregate was {gain:+.0%} against "
                f"{best.count} guest(s), under the {rule.min_gain:.0%} a step must add"))
        best = step
    return Knee(best.count, None, f"still scaling at {best.count} guests")


def next_count(count: int, schedule: str) -> int:
    """The step after `count`: one more guest (linear) or twice as many (doubling)."""
    if schedule == "linear":
        return count + 1
    if schedule == "doubling":
        return count * 2
    raise ValueError(f"schedule {schedule!r}: linear or doubling")
