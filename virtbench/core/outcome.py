"""What a benchmark yields: its metrics (name, unit, direction) and one trial's outcome.

Plain data shared by benchmarks (which make them), environments (a group of instances adds
its own metrics and merges outcomes), the runner and the store; of virtbench it imports only
metric_id (what a metric is, beside its name)."""
from __future__ import annotations

from dataclasses import dataclass, field

from .metric_id import SINGLE, MetricId


@dataclass(frozen=True)
class Metric:
    """One named number with a unit and a direction."""

    name: str
    unit: str
    higher_is_better: bool
    description: str = ""
    # how a group of instances aggregates a lower-is-better metric: "mean" of the instances,
    # or "makespan" (a job's time: first start to last end on the host's clock when the tool
    # stamps it, else the slowest instance). Higher-is-better metrics are rates: work of all
    # over one common interval when stamped, else the sum of the instances' own rates.
    aggregate: str = "mean"
    # what it is (metric_id.py): a benchmark's own metric is "single"; a group of instances
    # makes "aggregate", "instance" (with its index), "spread" and "fairness" ones of `base`
    scope: str = SINGLE
    base: str | None = None
    instance: int | None = None

    @property
    def identity(self) -> MetricId:
        return MetricId(self.name, self.base or self.name, self.scope, self.instance)


@dataclass
class TrialOutcome:
    """What one trial produced: its metric values, or why it failed, and the raw output.

    A failed trial keeps what it measured before it failed in `partial` (and whatever is in
    `values` when it failed after measuring, e.g. the environment was lost afterwards): the
    runner stores them as the failed trial's samples, evidence that never enters statistics."""

    values: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    partial: dict[str, float] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""
    exit: int | None = None
    wall_s: float | None = None
    # user + system CPU seconds of the command (the agent's rusage of it); None when unknown
    cpu_s: float | None = None
    # (kind, message) pairs the store should keep with the trial, e.g. ("physical-limit", ...)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    # what else the trial says about itself, stored with it (trials.detail): e.g. a group's
    # aggregate method and how its instances' clocks were mapped onto the host's
    detail: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None

    def measured(self) -> dict[str, float]:
        """Every value this trial measured: its result when ok, its evidence when failed."""
        return dict(self.values) if self.ok else {**self.partial, **self.values}
