"""The history (`virtbench history`) as text: what the table and markdown formats share.
Pure: the result model (model/history.py) in, lines and cells out."""
from __future__ import annotations

from ...foundations.model.history import HistoryChange, HistoryFact, HistoryReport, HistorySeries
from .fmt import numbers

COLUMNS = ("series", "environment", "benchmark", "metric", "runs", "last", "noise",
           "smallest", "changes")


def header(report: HistoryReport) -> str:
    scope = "".join([f", series {report.series_name}" if report.series_name else "",
                     f", host {report.host}" if report.host else ""])
    return (f"history of {report.runs} run(s) in {report.store}{scope}: "
            f"{len(report.series)} series; no change = within ±{report.threshold_pct:g} %; "
            f"at a fact change, before against after with runs as the unit (alpha "
            f"{report.alpha:g}, {report.correction} over {report.fact_points_tested} fact "
            f"point(s)); elsewhere a change-point search (PELT, penalty "
            f"{report.penalty_c:g} σ² log n); a change is confirmed by 2 runs after it; smallest: "
            "the change a series can see at a fact change / elsewhere; each change's run "
            "below the table")


def series_name(s: HistorySeries) -> str:
    return "ratio" if s.kind == "ratio" else "value"


def environment_cell(s: HistorySeries) -> str:
    where = f"{s.environment} / {s.reference}" if s.kind == "ratio" else s.environment
    return f"{where} @ {s.host}" if s.host else where


def metric_cell(s: HistorySeries) -> str:
    arrow = "↑" if s.higher_is_better else "↓"
    return f"{s.metric} {arrow}" + (" (quick)" if s.quick else "")


def last_cell(s: HistorySeries) -> str:
    if not s.points:
        return "n/a"
    p = s.points[-1]
    return numbers.value(p.value) + (f" {s.unit}" if s.unit else "")


def noise_cell(s: HistorySeries) -> str:
    return numbers.pct(s.noise_floor_pct, signed=False) if s.noise_floor_pct is not None \
        else "n/a"


def smallest_cell(s: HistorySeries) -> str:
    if s.mde_pct is None and s.drift_mde_pct is None:
        return s.note or "n/a"
    return f"{numbers.pct(s.mde_pct, signed=False)} / " \
           f"{numbers.pct(s.drift_mde_pct, signed=False)}"


def changes_cell(s: HistorySeries) -> str:
    shown = [c for c in s.changes if c.status in ("confirmed", "suspected")]
    if not shown:
        return "none" if s.note is None else "n/a"
    return "; ".join(f"{c.status} {_amount(c)} at point {c.index}" for c in shown)


def _amount(c: HistoryChange) -> str:
    if c.change_pct is None:
        return ""
    return f"{abs(c.change_pct):.1f} % {c.direction or ''}".strip()


def fact_text(f: HistoryFact) -> str:
    who = "reference's " if f.where == "reference" else ""
    if f.words:
        return who + f.words
    return f"{who}{f.name or f.key} {_short(f.before)} → {_short(f.after)}"


def _short(v) -> str:
    text = "none" if v is None else str(v)
    return text if len(text) <= 60 else text[:57] + "..."


def change_line(s: HistorySeries, c: HistoryChange) -> str:
    """One change in words: where, what, how sure, why there."""
    what = f"{environment_cell(s)} · {s.benchmark} · {metric_cell(s)} ({series_name(s)})"
    parts = [f"{c.status}: {what} at run {c.run} (point {c.index}, {c.kind}, "
             f"{c.runs_before} run(s) before, {c.runs_after} after)"]
    if c.ratio is not None:
        parts.append(f"after / before {numbers.value(c.ratio)} "
                     f"{numbers.ci(c.ci_low, c.ci_high)}"
                     + (f", {_amount(c)}" if c.status in ("confirmed", "suspected") else "")
                     + (f", {c.size}" if c.size else ""))
    if c.p_value is not None:
        parts.append(f"p {numbers.p(c.p_value)}, adjusted {numbers.p(c.p_adjusted)}")
    if c.facts:
        parts.append("changed: " + ", ".join(fact_text(f) for f in c.facts))
    if c.separate:
        parts.append(f"{len(c.separate)} options changed at once ({', '.join(c.separate)}): "
                     "the study in `--format json`'s `study` separates them, one environment "
                     "per option")
    if c.reason:
        parts.append(c.reason)
    return "; ".join(parts)


def change_lines(report: HistoryReport) -> list[str]:
    return [change_line(s, c) for s in report.series for c in s.changes]


def row(s: HistorySeries) -> list[str]:
    return [series_name(s), environment_cell(s), s.benchmark, metric_cell(s), str(s.runs),
            last_cell(s), noise_cell(s), smallest_cell(s), changes_cell(s)]
