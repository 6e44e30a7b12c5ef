"""Results over time: the store's runs lined up into series, and where each series moved.

series  runs lined up into series (host, environment, benchmark with parameters, metric),
        one point per run from the run's own analysis; value and ratio series
facts   which fingerprint facts changed between two runs (interim: the one place the fact
        finder replaces)
build   each series' changes (stats/changes.py), the family's correction, the result model
gate    `--fail-on change|regression [--last N]`: the confirmed changes that fail a pipeline
"""
from __future__ import annotations

from ...core.defaults import ALPHA, CORRECTION, THRESHOLD_PCT
from ...core.errors import VirtbenchError
from ...foundations.model.history import HistoryReport
from ...foundations.stats import changes
from ...foundations.store import Store
from .build import detect_all
from .gate import failing
from .series import SeriesKey, line_up


def history(store: Store, series: str | None = None, host: str | None = None,
            environments: list[str] | None = None, benchmarks: list[str] | None = None,
            metrics: list[str] | None = None, threshold_pct: float = THRESHOLD_PCT,
            alpha: float = ALPHA, correction: str = CORRECTION) -> HistoryReport:
    """The history of the store's complete runs (of `series`, of `host`, when given), only
    the series of the environments, benchmark cases and metrics named, when named. A filter
    that matches nothing is one line (exit 2). A damaged run is left out, its one line in
    the report's `left_out` (series.line_up); none left to read is one line (exit 2)."""
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

    def wanted(key: SeriesKey) -> bool:
        return (not environments or key.environment in environments) and \
            (not benchmarks or key.benchmark in benchmarks) and \
            (not metrics or key.metric in metrics)
    damaged: list[str] = []
    lines = line_up(store, runs, threshold_pct=threshold_pct, wanted=wanted,
                    skipped=damaged.append)
    if len(damaged) == len(runs):
        raise VirtbenchError(f"no complete run in {store.shown} can be read: {damaged[0]}"
                             + (f" (and {len(damaged) - 1} more damaged)"
                                if len(damaged) > 1 else ""))
    if not lines:
        raise VirtbenchError(f"no series in {len(runs)} run(s) of {store.shown} matches "
                             "--env/--bench/--metric; see `virtbench history` without them")
    found, tested = detect_all(lines, threshold_pct, alpha, correction)
    report = HistoryReport(store=store.shown, series_name=series, host=host,
                           runs=len(runs) - len(damaged),
                           threshold_pct=threshold_pct, alpha=alpha, correction=correction,
                           fact_points_tested=tested, penalty_c=changes.PENALTY_C,
                           series=found)
    report.left_out.extend(damaged)
    return report


__all__ = ["history", "failing", "line_up", "detect_all"]
