"""A series' chart (`history --format html`, `virtbench serve`): one point per run with its
interval as a whisker, the noise floor as a band around each stretch's level (the stretches
between confirmed changes), and each change point as a vertical line between the runs it
separates, labelled with the facts that changed there (hover: the change in words). A
ratio series is drawn as the run report's ratio charts are: direction-normalised (worse up,
whatever the metric's direction), on a log axis centred on 1 (the reference), the ±threshold
band shaded (logscale.py). A plotly figure spec (a plain dict); pure: reads the model."""
from __future__ import annotations

import math
from html import escape

from ...core.decisions import Direction
from ...foundations.model.history import HistoryChange, HistorySeries
from . import history as text, logscale
from .charts import BASELINE_COLOR, FAIL_COLOR, PASS_COLOR, UNDECIDED_COLOR
from .words.change import sentence, slowdown

NOISE_COLOR = "#6366f1"
BAND_COLOR = "#16a34a"
STATUS_COLOR = {"no change": BASELINE_COLOR, "undecided": BASELINE_COLOR,
                "suspected": UNDECIDED_COLOR}
STATUS_DASH = {"confirmed": "solid", "suspected": "dash", "no change": "dot",
               "undecided": "dot"}
LABEL_MAX = 48          # characters of a change's label on the chart; the hover has it all


def change_color(c: HistoryChange) -> str:
    if c.status == "confirmed":
        return FAIL_COLOR if c.direction == Direction.WORSE else "#15803d"
    return STATUS_COLOR.get(c.status, BASELINE_COLOR)


def change_label(c: HistoryChange) -> str:
    """A change as the chart labels it: its status and amount, then what changed there (the
    facts, or "drift" where none did)."""
    what = ", ".join(text.fact_text(f) for f in c.facts) if c.facts else "drift"
    if len(what) > LABEL_MAX:
        what = what[:LABEL_MAX - 3] + "..."
    amount = f" {abs(c.change_pct):.1f} % {c.direction or ''}".rstrip() \
        if c.change_pct is not None and c.status in ("confirmed", "suspected") else ""
    return f"{c.status}{amount}: {what}"


def plotted(s: HistorySeries, v: float | None) -> float | None:
    """Where a value sits on the chart: itself (value series), or the slowdown against the
    reference (ratio series: > 1 worse, < 1 better); None when it cannot be drawn."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if s.kind != "ratio":
        return v
    return slowdown(v, s.higher_is_better)


def stretches(s: HistorySeries) -> list[tuple[int, int]]:
    """The runs between confirmed changes, as [start, end) index pairs."""
    cuts = sorted({c.index for c in s.changes if c.status == "confirmed"
                   and 0 < c.index < len(s.points)})
    edges = [0, *cuts, len(s.points)]
    return [(a, b) for a, b in zip(edges, edges[1:]) if b > a]


def level(values: list[float | None]) -> float | None:
    """A stretch's level: the geometric mean of its points (what the change test compares)."""
    good = [v for v in values if v is not None and v > 0]
    if not good:
        return None
    return math.exp(sum(math.log(v) for v in good) / len(good))


def tick_texts(s: HistorySeries) -> list[str]:
    """One tick per run: its start (month-day hour:minute) and its id's tail (a run id is
    DATE-TIME-XXXX: the time and the random part)."""
    out = []
    for p in s.points:
        when = (p.started or "")[5:16].replace("T", " ")
        out.append(f"{escape(when)}<br>{escape(p.run[-11:])}")
    return out


def series_figure(s: HistorySeries, threshold_pct: float, title: str) -> dict:
    """The series' chart (see the module's docstring)."""
    ratio = s.kind == "ratio"
    xs = list(range(len(s.points)))
    ys = [plotted(s, p.value) for p in s.points]
    ends = [(plotted(s, p.ci_low), plotted(s, p.ci_high)) for p in s.points]
    plus, minus, hover = [], [], []
    for p, y, (a, b) in zip(s.points, ys, ends):
        lo, hi = (min(a, b), max(a, b)) if None not in (a, b, y) else (None, None)
        plus.append(max(0.0, hi - y) if hi is not None else 0.0)
        minus.append(max(0.0, y - lo) if lo is not None else 0.0)
        words = (sentence(p.value, s.higher_is_better, s.unit, than="the reference")
                 if ratio and y is not None else f"{text.numbers.value(p.value)} {s.unit}")
        hover.append(f"run {escape(p.run)}<br>{escape(p.started or '')}<br>{escape(words)}"
                     f"<br>interval {escape(text.numbers.ci(p.ci_low, p.ci_high))}"
                     + (f" (ratio {p.value:.4g})" if ratio and p.value is not None else "")
                     + f"<br>n = {p.n}" + (f"<br>verdict: {escape(p.verdict)}"
                                            if p.verdict else ""))
    data = [{"type": "scatter", "mode": "lines+markers", "x": xs, "y": ys,
             "name": "runs", "line": {"color": PASS_COLOR, "width": 1.5},
             "marker": {"size": 7, "color": PASS_COLOR},
             "error_y": {"type": "data", "symmetric": False, "array": plus,
                         "arrayminus": minus, "color": "#111827", "thickness": 1.2,
                         "width": 4},
             "hovertext": hover, "hoverinfo": "text"}]
    shapes, notes = [], []
    floor = s.noise_floor_pct
    for a, b in stretches(s):
        lv = level(ys[a:b])
        if lv is None:
            continue
        x0, x1 = a - 0.4, b - 0.6
        if floor is not None:
            f = 1.0 + floor / 100.0
            shapes.append({"type": "rect", "x0": x0, "x1": x1, "y0": lv / f, "y1": lv * f,
                           "fillcolor": NOISE_COLOR, "opacity": 0.13, "layer": "below",
                           "line": {"width": 0}})
        shapes.append({"type": "line", "x0": x0, "x1": x1, "y0": lv, "y1": lv,
                       "line": {"color": NOISE_COLOR, "width": 1, "dash": "dot"}})
    for i, c in enumerate(c for c in s.changes if 0 < c.index < len(s.points)):
        x = c.index - 0.5
        color = change_color(c)
        shapes.append({"type": "line", "yref": "paper", "y0": 0, "y1": 1, "x0": x, "x1": x,
                       "line": {"color": color, "width": 2 if c.status == "confirmed" else 1,
                                "dash": STATUS_DASH.get(c.status, "dot")}})
        notes.append({"x": x, "yref": "paper", "y": 1.0 - 0.09 * (i % 4), "xanchor": "left",
                      "yanchor": "top", "xshift": 3, "showarrow": False,
                      "text": escape(change_label(c)),
                      "hovertext": escape(text.change_line(s, c)),
                      "font": {"size": 10, "color": color}, "bgcolor": "rgba(255,255,255,0.8)",
                      "captureevents": True})
    layout = {"title": {"text": escape(title), "font": {"size": 13}, "x": 0.01,
                        "xanchor": "left"},
              "height": 420, "margin": {"l": 70, "r": 20, "t": 48, "b": 70},
              "xaxis": {"tickvals": xs, "ticktext": tick_texts(s), "showgrid": False,
                        "zeroline": False, "range": [-0.6, max(len(xs) - 0.4, 0.6)],
                        "title": {"text": "runs, oldest first (start, id)",
                                  "font": {"size": 11}}},
              "showlegend": False, "plot_bgcolor": "#ffffff", "shapes": shapes,
              "annotations": notes, "hovermode": "closest",
              "font": {"family": "system-ui, sans-serif", "size": 11}}
    if ratio:
        reach = [y for y in ys if y is not None] + [v for a, b in ends for v in (a, b)
                                                     if v is not None]
        if floor is not None:
            reach += [y * (1 + floor / 100) for y in ys if y is not None]
        half = logscale.half_width(reach, threshold_pct, label_room=0.15)
        tickvals = logscale.ticks(half)
        low_edge, high_edge = logscale.band(threshold_pct)
        shapes[:0] = [{"type": "rect", "xref": "paper", "x0": 0, "x1": 1, "y0": low_edge,
                       "y1": high_edge, "fillcolor": BAND_COLOR, "opacity": 0.1,
                       "layer": "below", "line": {"width": 0}},
                      {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": 1, "y1": 1,
                       "line": {"color": BASELINE_COLOR, "width": 1.5}}]
        layout["yaxis"] = {"type": "log", "range": [-half, half], "tickvals": tickvals,
                           "ticktext": [logscale.tick_text(t) for t in tickvals],
                           "gridcolor": "#e5e7eb", "zeroline": False,
                           "title": {"text": escape(f"times {s.reference or 'the reference'}"
                                                    " (log scale; up = worse)"),
                                     "font": {"size": 11}}}
    else:
        layout["yaxis"] = {"gridcolor": "#e5e7eb", "zeroline": False, "automargin": True,
                           "title": {"text": escape(f"{s.metric} ({s.unit}), "
                                                    + ("higher" if s.higher_is_better
                                                       else "lower") + " is better"),
                                     "font": {"size": 11}}}
    return {"data": data, "layout": layout}
