"""The history as HTML pages (`virtbench history --format html -o DIR`, and the same pages
served by `virtbench serve`): an index of the series grouped by environment and benchmark
with each one's latest status, and one page per series (its chart, ../historychart.py; its
points; its changes in words). Where the pages link to is the caller's (`Links`): files
side by side in a directory, or a server's paths. Pure: the result model in, text out; the
templates escape every value."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from itertools import groupby
from typing import Callable

from ....foundations.model.history import HistoryReport, HistorySeries
from .. import history as text, historychart
from ..fmt import numbers
from .html import _page, _span


@dataclass(frozen=True)
class Links:
    """Where the pages point: the index, a series' page (by its id), a run's page (None:
    no link), plotly.js (None: inline in each page), and the links at the top of a page."""
    index: str
    series: Callable[[str], str]
    run: Callable[[str], str | None] = lambda run_id: None
    plotly_src: str | None = None
    nav: list[tuple[str, str]] = field(default_factory=list)


def series_id(s: HistorySeries) -> str:
    """A series' stable id: a hash of what makes it one (kind, host, environment, reference,
    benchmark with its parameters, quick, metric), 12 hex digits."""
    key = json.dumps([s.kind, s.host, s.environment, s.reference, s.benchmark, s.params,
                      s.quick, s.metric], sort_keys=True, default=str)
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def find(report: HistoryReport, sid: str) -> HistorySeries | None:
    return next((s for s in report.series if series_id(s) == sid), None)


def title(s: HistorySeries) -> str:
    return f"{text.environment_cell(s)} · {s.benchmark} · {text.metric_cell(s)} " \
           f"({text.series_name(s)})"


def latest(s: HistorySeries) -> dict:
    """The series' latest status: its last confirmed or suspected change, else steady."""
    if s.note is not None and not s.changes:
        return _span(s.note, "muted")
    shown = [c for c in s.changes if c.status in ("confirmed", "suspected")]
    if not shown:
        return _span("no change found", "same")
    c = shown[-1]
    amount = f" {abs(c.change_pct):.1f} % {c.direction or ''}".rstrip() \
        if c.change_pct is not None else ""
    return _span(f"{c.status}{amount} at {c.run}", c.status, text.change_line(s, c))


def _group(s: HistorySeries) -> tuple[str, str]:
    return (f"{s.environment} @ {s.host}" if s.host else s.environment), s.benchmark


def index_page(report: HistoryReport, links: Links) -> str:
    """Every series, grouped by environment (at its host) then benchmark."""
    ordered = sorted(report.series, key=lambda s: (_group(s), s.metric, s.kind))
    groups = []
    for (env, bench), members in groupby(ordered, key=_group):
        rows = [[_span(text.metric_cell(s), None, href=links.series(series_id(s))),
                 text.series_name(s), s.reference or "", str(s.runs), text.last_cell(s),
                 text.noise_cell(s), text.smallest_cell(s), latest(s)] for s in members]
        groups.append({"environment": env, "benchmark": bench, "rows": rows})
    return _page("history_index.html.j2", "virtbench history", [],
                 plotly_src="", nav=links.nav,
                 header=text.header(report), groups=groups,
                 columns=["metric", "series", "reference", "runs", "last", "noise floor",
                          "smallest change it can see", "latest"])


def series_page(report: HistoryReport, s: HistorySeries, links: Links) -> str:
    """One series: its chart, its changes in words, its points."""
    name = title(s)
    chart = historychart.series_figure(s, report.threshold_pct, name)
    points = []
    for p in s.points:
        href = links.run(p.run)
        points.append([_span(p.run, None, href=href) if href else p.run,
                       (p.started or "")[:19].replace("T", " "),
                       p.series or "", numbers.value(p.value),
                       numbers.ci(p.ci_low, p.ci_high), str(p.n), p.verdict or ""])
    changes = [{"status": c.status, "cls": c.status.replace(" ", "-"),
                "label": historychart.change_label(c), "line": text.change_line(s, c)}
               for c in s.changes]
    facts = [["kind", s.kind], ["host", s.host], ["environment", s.environment],
             ["reference", s.reference], ["benchmark", s.benchmark],
             ["parameters", ", ".join(f"{k}={v}" for k, v in s.params.items()) or None],
             ["metric", text.metric_cell(s)], ["unit", s.unit or None],
             ["runs", str(s.runs)], ["noise floor", text.noise_cell(s)],
             ["smallest change it can see", text.smallest_cell(s)], ["note", s.note]]
    return _page("history_series.html.j2", f"virtbench history · {name}",
                 [("chart-0", chart)], plotly_src=links.plotly_src, nav=links.nav,
                 name=name, header=text.header(report), index=links.index,
                 facts=[[_span(k, "key"), v] for k, v in facts if v is not None],
                 changes=changes, points=points, ratio=s.kind == "ratio",
                 threshold=f"{report.threshold_pct:g}",
                 points_header=["run", "started", "tagged", "ratio" if s.kind == "ratio"
                                else "value", "interval", "n", "verdict"])
