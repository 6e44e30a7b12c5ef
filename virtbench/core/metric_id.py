"""What a stored metric is, beside its name: which metric of its benchmark it is of, and its
scope. Plain data (it imports nothing of virtbench), made where the metric is made.

A benchmark declares its metrics (`triad_mb_s`); one environment measures each as is
(scope "single"). A group of N instances (environments/instances.py) makes from each: the
aggregate over the instances (`triad_mb_s`, scope "aggregate"), each instance's own value
(`triad_mb_s_i0`..., scope "instance", with its index), the spread between them
(`triad_mb_s_spread_pct`, "spread") and Jain's fairness index (`triad_mb_s_fairness`,
"fairness"). The names below are how a group names them; the identity travels with the
metric (outcome.Metric) to the store (samples.base_metric, scope, instance) and the report,
so nothing reads a name to know what it is.

`identify` is the one reader of names: for rows stored before the identity was (the store's
revision 0004 runs it once over old rows) and for samples handed to the store without one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

SINGLE, AGGREGATE, INSTANCE, SPREAD, FAIRNESS = ("single", "aggregate", "instance", "spread",
                                                 "fairness")
SCOPES = (SINGLE, AGGREGATE, INSTANCE, SPREAD, FAIRNESS)
# the scopes a group derives from an aggregate: shown under it, never a row of their own
GROUP_DETAIL = (INSTANCE, SPREAD, FAIRNESS)

_SPREAD, _FAIRNESS = "_spread_pct", "_fairness"
_INSTANCE = re.compile(r"^(?P<base>.+)_i(?P<k>\d+)$")


@dataclass(frozen=True)
class MetricId:
    """A metric's name as stored and shown, the benchmark's metric it is of, its scope and,
    for an instance's own value, the instance's index (from 0)."""

    name: str
    base: str
    scope: str = SINGLE
    instance: int | None = None

    @classmethod
    def single(cls, name: str) -> "MetricId":
        return cls(name, name)


def instance_name(base: str, i: int) -> str:
    return f"{base}_i{i}"


def spread_name(base: str) -> str:
    return base + _SPREAD


def fairness_name(base: str) -> str:
    return base + _FAIRNESS


def identify(names: Iterable[str]) -> dict[str, MetricId]:
    """The identity of each of one trial's (or one environment x benchmark's) metric names,
    read from the names a group gives them (pure): `X_iK`, `X_spread_pct` and `X_fairness`
    are of X when X is among the names, and X is then an aggregate; anything else is single.
    """
    names = set(names)
    out: dict[str, MetricId] = {}
    aggregates = set()
    for name in names:
        m = _INSTANCE.match(name)
        if m and m["base"] in names:
            out[name] = MetricId(name, m["base"], INSTANCE, int(m["k"]))
            aggregates.add(m["base"])
            continue
        for suffix, scope in ((_SPREAD, SPREAD), (_FAIRNESS, FAIRNESS)):
            if name.endswith(suffix) and name[: -len(suffix)] in names:
                out[name] = MetricId(name, name[: -len(suffix)], scope)
                aggregates.add(name[: -len(suffix)])
                break
    for name in names:
        if name not in out:
            out[name] = MetricId(name, name, AGGREGATE if name in aggregates else SINGLE)
    return out
