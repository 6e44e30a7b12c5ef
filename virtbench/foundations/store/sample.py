"""A sample as the store is handed it: one value of a trial and what its metric is."""
from __future__ import annotations

from dataclasses import dataclass

from ...core.metric_id import MetricId, identify


@dataclass
class Sample:
    """One value of a trial, with what its metric is (metric_id.py): the benchmark's metric
    it is of (`base`), its scope and instance; a sample given without them is identified
    from its trial's metric names (metric_id.identify) when it is recorded."""

    metric: str
    value: float
    unit: str
    higher_is_better: bool
    scope: str | None = None
    base: str | None = None
    instance: int | None = None


def identified(samples_: list[Sample]) -> list[MetricId]:
    """Each sample's identity: its own, else read from the trial's metric names."""
    named = identify(s.metric for s in samples_) if any(s.scope is None for s in samples_) \
        else {}
    return [MetricId(s.metric, s.base or s.metric, s.scope, s.instance) if s.scope is not None
            else named[s.metric] for s in samples_]
