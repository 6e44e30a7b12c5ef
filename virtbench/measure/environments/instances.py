"""How a group's instances' values become its metrics (pure): the aggregate (one definition:
virtbench/foundations/stats/aggregate.py), the spread, Jain's fairness index and each instance's value.

- a rate (higher is better) whose tool stamps its blocks (`Benchmark.timed`): the work of all
  instances over one common interval on the host's clock, best block ("common-interval");
- a rate whose tool stamps nothing: the sum of the instances' own rates, their runs released
  together by one barrier with the same parameters ("sum": not a common interval);
- a job's time (`Metric.aggregate = "makespan"`): first start to last end on the host's clock
  when stamped ("makespan"), else the slowest instance ("slowest");
- any other lower-is-better metric (a latency, a loss, a CPU share): the mean ("mean").
"""
from __future__ import annotations

from dataclasses import replace

from ...core.metric_id import (
    AGGREGATE,
    FAIRNESS,
    INSTANCE,
    SPREAD,
    fairness_name,
    instance_name,
    spread_name,
)
from ...core.outcome import Metric, TrialOutcome
from ...foundations.stats.aggregate import Span, common_rate, makespan, transpose


def jain_index(values: list[float]) -> float:
    """Jain's fairness index: 1 when every instance got the same, 1/n when one got all."""
    total = sum(values)
    squares = sum(v * v for v in values)
    return total * total / (len(values) * squares) if squares else 1.0


def spread_pct(values: list[float]) -> float | None:
    """How far the best instance is from the worst, in % of the worst (CNAF's max difference);
    None when the worst is 0 and the best is not (no finite percentage: retransmits, say)."""
    low, high = min(values), max(values)
    if low <= 0:
        return 0.0 if high == low else None
    return (high - low) / low * 100.0


COMMON_INTERVAL, SUM, MAKESPAN, SLOWEST, MEAN = ("common-interval", "sum", "makespan",
                                                   "slowest", "mean")


def aggregate_method(metric: Metric, stamped: bool) -> str:
    """How a group aggregates `metric` (pure): a rate over one common interval when its blocks
    are stamped, else the sum of the instances' rates; a job's time (aggregate="makespan") as
    the makespan when stamped, else the slowest instance; any other lower-is-better metric
    (latency, loss, a CPU share) as the mean of the instances."""
    if metric.higher_is_better:
        return COMMON_INTERVAL if stamped else SUM
    if metric.aggregate == "makespan":
        return MAKESPAN if stamped else SLOWEST
    return MEAN


def describe_aggregate(method: str, n: int) -> str:
    return {
        COMMON_INTERVAL: f"work of all {n} instances over one common interval on the host's "
                         "clock (earliest start to latest end, best block), each instance's "
                         "clock mapped onto the host's",
        SUM: f"sum of the {n} instances' own rates, their runs released together by one "
             "barrier with the same parameters (each over its own interval: not a common "
             "interval)",
        MAKESPAN: f"makespan of the {n} instances: first start to last end on the host's clock",
        SLOWEST: f"the slowest of the {n} instances (their runs released together by one "
                 "barrier)",
        MEAN: f"mean over {n} instances",
    }[method]


def group_metrics(metrics: tuple[Metric, ...], n: int,
                  timed: tuple[str, ...] = ()) -> tuple[Metric, ...]:
    out: list[Metric] = []
    for m in metrics:
        how = describe_aggregate(aggregate_method(m, m.name in timed), n)
        out.append(replace(m, description=f"{how}: {m.description}", scope=AGGREGATE,
                           base=m.name))
        out.append(Metric(spread_name(m.name), "%", False,
                          f"max/min - 1 of {m.name} across instances", scope=SPREAD, base=m.name))
        out.append(Metric(fairness_name(m.name), "Jain", True,
                          f"Jain's fairness index of {m.name}", scope=FAIRNESS, base=m.name))
        out += [Metric(instance_name(m.name, i), m.unit, m.higher_is_better,
                       f"{m.name} of instance {i}", scope=INSTANCE, base=m.name, instance=i)
                for i in range(n)]
    return tuple(out)


def aggregates(metrics: tuple[Metric, ...], per_instance: list[dict[str, float]],
               spans: dict[str, list[list[Span]]] | None = None
               ) -> tuple[dict[str, float], dict[str, str]]:
    """Pure: the instances' values -> (aggregate, spread, fairness and each instance's value;
    the method of each aggregate). `spans`: per metric, each instance's blocks on the host's
    clock (for a `timed` metric whose every instance stamped the same number of blocks)."""
    values: dict[str, float] = {}
    methods: dict[str, str] = {}
    spans = spans or {}
    n = len(per_instance)
    for m in metrics:
        xs = [inst[m.name] for inst in per_instance if m.name in inst]
        if len(xs) != n:
            continue
        blocks = None
        if m.name in spans and len(spans[m.name]) == n:
            try:
                blocks = transpose(spans[m.name])
            except ValueError:          # instances stamped different numbers of blocks
                blocks = None
        method = aggregate_method(m, bool(blocks))
        if method == COMMON_INTERVAL:
            values[m.name] = common_rate(blocks).value
        elif method == MAKESPAN:
            values[m.name] = makespan(blocks).value
        elif method == SUM:
            values[m.name] = sum(xs)
        elif method == SLOWEST:
            values[m.name] = max(xs)
        else:
            values[m.name] = sum(xs) / n
        methods[m.name] = method
        spread = spread_pct(xs)
        if spread is not None:
            values[spread_name(m.name)] = spread
        values[fairness_name(m.name)] = jain_index(xs)
        for i, x in enumerate(xs):
            values[instance_name(m.name, i)] = x
    return values, methods


def combine(metrics: tuple[Metric, ...], per_instance: list[dict[str, float]],
            spans: dict[str, list[list[Span]]] | None = None) -> dict[str, float]:
    """Pure: the instances' values -> aggregate, spread, fairness and each instance."""
    return aggregates(metrics, per_instance, spans)[0]


def instance_evidence(metrics: tuple[Metric, ...], outcomes: list[TrialOutcome]) -> dict[str, float]:
    """A failed group trial's evidence: each instance's values, of those that finished and of
    what the failed ones measured before failing (`m_i0`...); no aggregate of a part."""
    out = {}
    for i, o in enumerate(outcomes):
        measured = o.measured()
        for m in metrics:
            if m.name in measured:
                out[instance_name(m.name, i)] = measured[m.name]
    return out
