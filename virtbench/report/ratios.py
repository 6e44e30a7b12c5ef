"""The HTML report's ratio chart: per benchmark, one horizontal bar per comparison (each
metric × environment against its reference, and against its own `versus` reference), on a
log axis centred on 1 (the reference). Direction-normalised (analysis/headline.py's
slowdown): worse is always right of 1, better left, whatever the metric's direction, so
that 41× slower reads as far from 1 as 41× faster and 18× does not look like 41×. The
±threshold band is shaded, each bar carries its factor in words ("41.7× slower") and its
(1 - alpha) interval as a whisker. A plotly figure spec (a plain dict); pure."""
from __future__ import annotations

from html import escape

from ..analysis.headline import factor_words, interval_words, slowdown
from ..model import Result, VsReference
from . import logscale
from .charts import BASELINE_COLOR, FAIL_COLOR, PASS_COLOR, PUBLISHED_COLOR, UNDECIDED_COLOR

BAND_COLOR = "#16a34a"
VERDICT_COLOR = {"pass": PASS_COLOR, "differs, within threshold": PASS_COLOR,
                 "fail": FAIL_COLOR}


def bar_color(verdict: str) -> str:
    return VERDICT_COLOR.get(verdict, UNDECIDED_COLOR)


def comparisons(rows: list[Result], baseline: str | None) -> list[tuple[str, Result, VsReference]]:
    """Every comparison of the rows that has a ratio, in table order, with its bar's label:
    (label, result, comparison)."""
    out = []
    for r in rows:
        for vs in [r.vs_baseline, *r.vs_others]:
            if vs is None or slowdown(vs.ratio, r.higher_is_better) is None:
                continue
            ref = f" vs {vs.reference}" if vs.reference and vs.reference != baseline else ""
            out.append((f"{r.metric} · {r.environment}{ref}", r, vs))
    return out


def bar_text(r: Result, vs: VsReference) -> tuple[float, float | None, float | None, str]:
    """A comparison as (slowdown, interval low, interval high, words): the factor's words
    from analysis/headline.py ("41.7× slower"); the interval as slowdowns."""
    slow = slowdown(vs.ratio, r.higher_is_better)
    ends = [slowdown(x, r.higher_is_better) for x in (vs.ratio_ci_low, vs.ratio_ci_high)]
    low, high = (min(ends), max(ends)) if None not in ends else (None, None)
    return slow, low, high, factor_words(slow, r.unit)[2]


def ratio_figure(rows: list[Result], baseline: str | None, title: str,
                 threshold_pct: float) -> dict | None:
    """One benchmark's comparisons as a log-ratio chart; None when none has a ratio."""
    found = comparisons(rows, baseline)
    if not found:
        return None
    labels, bases, lengths, minus, plus, colors, hover, notes = [], [], [], [], [], [], [], []
    reach: list[float] = []
    pub_x, pub_y, pub_hover = [], [], []
    for label, r, vs in found:
        slow, low, high, words = bar_text(r, vs)
        base, length = logscale.bar_span(slow)
        down, up = logscale.whisker(slow, low, high)
        labels.append(label)
        bases.append(base)
        lengths.append(length)
        minus.append(down)
        plus.append(up)
        colors.append(bar_color(vs.verdict))
        reach += [slow] + [x for x in (low, high) if x is not None]
        span = interval_words(low, high)
        hover.append(f"{escape(label)}<br>{escape(words)}"
                     + (f", interval {span} (as slowdowns)" if span else "")
                     + f"<br>ratio {vs.ratio:.4g} ({r.unit}, "
                       f"{'higher' if r.higher_is_better else 'lower'} is better)"
                     + f"<br>verdict: {escape(vs.verdict)}")
        x, anchor = logscale.label_anchor(slow, low, high)
        notes.append({"x": x, "y": label, "text": escape(words), "showarrow": False,
                      "xanchor": anchor, "xshift": 4 if anchor == "left" else -4,
                      "font": {"size": 11, "color": "#111827"}})
        pub = r.published
        pub_slow = slowdown(pub.ratio, r.higher_is_better) if pub else None
        if pub_slow is not None and (pub.versus or baseline) == vs.reference \
                and vs is r.vs_baseline:
            pub_x.append(pub_slow)
            pub_y.append(label)
            reach.append(pub_slow)
            pub_hover.append(f"published: {escape(factor_words(pub_slow, r.unit)[2])} "
                             f"vs {escape(vs.reference or '')} ({escape(pub.source)})")
    refs = sorted({vs.reference for _, _, vs in found if vs.reference})
    one = f"1 = {refs[0]}" if len(refs) == 1 else "1 = each one's reference"
    half = logscale.half_width(reach, threshold_pct)
    tickvals = logscale.ticks(half)
    low_edge, high_edge = logscale.band(threshold_pct)
    data = [{"type": "bar", "orientation": "h", "y": labels, "x": lengths, "base": bases,
             "name": "against the reference", "marker": {"color": colors},
             "error_x": {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus,
                         "color": "#111827", "thickness": 1.5, "width": 5},
             "hovertext": hover, "hoverinfo": "text"}]
    if pub_x:
        data.append({"type": "scatter", "mode": "markers", "x": pub_x, "y": pub_y,
                     "name": "the source's published ratio",
                     "marker": {"symbol": "diamond", "size": 11, "color": PUBLISHED_COLOR,
                                "line": {"color": "#111827", "width": 1}},
                     "hovertext": pub_hover, "hoverinfo": "text"})
    shapes = [{"type": "rect", "yref": "paper", "y0": 0, "y1": 1, "x0": low_edge,
               "x1": high_edge, "fillcolor": BAND_COLOR, "opacity": 0.15, "layer": "below",
               "line": {"width": 0}},
              {"type": "line", "yref": "paper", "y0": 0, "y1": 1, "x0": 1, "x1": 1,
               "line": {"color": BASELINE_COLOR, "width": 1.5}}]
    edge = {"yref": "paper", "y": 1, "yanchor": "bottom", "showarrow": False,
            "font": {"size": 11, "color": "#374151"}}
    notes += [{**edge, "x": -half, "xanchor": "left", "text": "← better than the reference"},
              {**edge, "x": half, "xanchor": "right", "text": "worse than the reference →"},
              {**edge, "x": 0, "xanchor": "center",
               "text": f"±{threshold_pct:g} % band", "font": {"size": 10, "color": BAND_COLOR}}]
    layout = {"title": {"text": escape(title), "font": {"size": 13}, "x": 0.01,
                        "xanchor": "left"},
              "height": 110 + 30 * len(labels), "margin": {"l": 20, "r": 20, "t": 56, "b": 44},
              "xaxis": {"type": "log", "range": [-half, half], "tickvals": tickvals,
                        "ticktext": [logscale.tick_text(t) for t in tickvals],
                        "showgrid": True, "gridcolor": "#e5e7eb", "zeroline": False,
                        "title": {"text": f"times the reference (log scale; {escape(one)})",
                                  "font": {"size": 11}}},
              "yaxis": {"automargin": True, "autorange": "reversed", "type": "category"},
              "bargap": 0.35, "showlegend": bool(pub_x),
              "legend": {"orientation": "h", "x": 1, "xanchor": "right", "y": -0.2},
              "plot_bgcolor": "#ffffff", "shapes": shapes, "annotations": notes,
              "font": {"family": "system-ui, sans-serif", "size": 11}}
    return {"data": data, "layout": layout}
