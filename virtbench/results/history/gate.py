"""`history --fail-on change|regression [--last N]`: the confirmed changes that fail a
pipeline (exit 3): any confirmed change ("change"), or a confirmed change for the worse by
the metric's direction ("regression"), whose first run after it is among the last N runs
read (all of them when N is not given). A suspected change (one run after) never fails it."""
from __future__ import annotations

from ...foundations.model.history import HistoryChange, HistoryReport, HistorySeries

FAIL_ON = ("change", "regression")


def failing(report: HistoryReport, on: str, last: int | None = None
            ) -> list[tuple[HistorySeries, HistoryChange]]:
    if on not in FAIL_ON:
        raise ValueError(f"fail on {on!r}: use {' or '.join(FAIL_ON)}")
    order = sorted({(p.started or "", p.run) for s in report.series for p in s.points})
    recent = {run for _, run in order[-last:]} if last else {run for _, run in order}
    return [(s, c) for s in report.series for c in s.changes
            if c.status == "confirmed" and c.run in recent
            and (on == "change" or c.regression)]
