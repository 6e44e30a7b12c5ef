"""What each aggregate of a group of instances is, in every report: one line per environment
x benchmark x method (pure text; the formats lay it out)."""
from __future__ import annotations

from ...measure.environments.instances import describe_aggregate
from ...foundations.model import RunReport


AGGREGATES_TITLE = "aggregates of instances"


def aggregate_lines(analysis: RunReport) -> list[str]:
    """One line per environment x benchmark x aggregate method of a group of instances: which
    metrics it covers and what it is (the definition in docs/instances-and-limits.md)."""
    count = {e.label: e.instances for e in analysis.environments}
    groups: dict[tuple[str, str, str], list[str]] = {}
    for r in analysis.results:
        if r.aggregate:
            groups.setdefault((r.environment, r.benchmark, r.aggregate), []).append(r.metric)
    out = []
    for (env, bench, method), metrics in groups.items():
        n = count.get(env, 0)
        what = (describe_aggregate(method, n) if not method.startswith("mixed")
                else f"{method} (the trials differ; see each trial's detail)")
        out.append(f"{env} · {bench} · {', '.join(metrics)}: {what}")
    return out
