"""Results over time: the store's runs lined up into series, and where each series moved.

series  runs lined up into series (host, environment, benchmark with parameters, metric),
        one point per run from the run's own analysis; value and ratio series
facts   which fingerprint facts changed between two runs (interim: the one place the fact
        finder replaces)
build   each series' changes (stats/changes.py), the family's correction, the result model
gate    `--fail-on change|regression [--last N]`: the confirmed changes that fail a pipeline
request what history is asked (HistoryRequest): runs, series, threshold, alpha, correction
"""
from __future__ import annotations

from ...core.errors import VirtbenchError
from ...foundations.model.history import HistoryReport
from ...foundations.stats import changes
from ...foundations.store import Store
from .build import detect_all
from .gate import failing
from .request import HistoryRequest
from .series import line_up


def history(store: Store, asked: HistoryRequest | None = None) -> HistoryReport:
    """The history of the store's complete runs that `asked` names (request.py; None: every
    series, at the defaults). A filter that matches nothing is one line (exit 2). A damaged
    run is left out, its one line in the report's `left_out` (series.line_up); none left to
    read is one line (exit 2)."""
    asked = asked or HistoryRequest()
    series, host = asked.series, asked.host
    if series is not None and series not in store.series_names():
        names = store.series_names()
        raise VirtbenchError(f"--series {series}: no run in {store.shown} is tagged so; "
                             + (f"its series: {', '.join(names)}" if names else
                                "tag runs with `virtbench run --series NAME`"))
    runs = store.complete_runs(series=series, host=host)
    if not runs:
        if host is not None:
            hosts = sorted({r["host"] for r in store.complete_runs(series=series)
                            if r["host"]})
            raise VirtbenchError(f"--host {host}: no complete run of that host in "
                                 f"{store.shown}; its hosts: {', '.join(hosts) or '(none)'}")
        raise VirtbenchError(f"no complete run in {store.shown}"
                             + (f" tagged {series}" if series else "")
                             + "; run a study first with `virtbench run`")
    damaged: list[str] = []
    lines = line_up(store, runs, threshold_pct=asked.threshold_pct, wanted=asked.wanted,
                    skipped=damaged.append)
    if len(damaged) == len(runs):
        raise VirtbenchError(f"no complete run in {store.shown} can be read: {damaged[0]}"
                             + (f" (and {len(damaged) - 1} more damaged)"
                                if len(damaged) > 1 else ""))
    if not lines:
        raise VirtbenchError(f"no series in {len(runs)} run(s) of {store.shown} matches "
                             "--env/--bench/--metric; see `virtbench history` without them")
    found, tested = detect_all(lines, asked.threshold_pct, asked.alpha, asked.correction)
    report = HistoryReport(store=store.shown, series_name=series, host=host,
                           runs=len(runs) - len(damaged), threshold_pct=asked.threshold_pct,
                           alpha=asked.alpha, correction=asked.correction,
                           fact_points_tested=tested, penalty_c=changes.PENALTY_C,
                           series=found)
    report.left_out.extend(damaged)
    return report


__all__ = ["history", "HistoryRequest", "failing", "line_up", "detect_all"]
