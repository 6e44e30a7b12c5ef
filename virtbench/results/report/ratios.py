"""The HTML report's ratio chart: per benchmark, one horizontal bar per comparison (each
metric × environment against its reference, and against its own `versus` reference), on a
log axis centred on 1 (the reference). Direction-normalised (words/change.py's slowdown):
worse is always right of 1, better left, whatever the metric's direction, so that 41×
slower reads as far from 1 as 41× faster and 18× does not look like 41×. The ±threshold
band is shaded, each bar carries its change in words as every format says it ("41.7×
slower", "6.0 % faster": words/change.py) and its (1 - alpha) interval as a whisker. The
compare page draws two runs' changes the same way (run A at 1, the ±min-change band). A
plotly figure spec (a plain dict); pure."""
from __future__ import annotations

from dataclasses import dataclass
from html import escape

from ...core.decisions import CompareVerdict
from ...foundations.model import CompareRow, Result, VsReference
from . import logscale
from .charts import (BASELINE_COLOR, FAIL_COLOR, PUBLISHED_COLOR, UNDECIDED_COLOR,
                     VERDICT_COLOR)
from .words.change import factor, ratio_of, sentence, slowdown

BAND_COLOR = "#16a34a"
LABEL_MARGIN_MAX = 420          # px; a longer label wraps


def interval_words(low: float | None, high: float | None) -> str:
    """A whisker's interval as slowdowns, "[38.1, 45.0]", or ""."""
    if low is None or high is None:
        return ""
    return f"[{factor(low)}, {factor(high)}]"


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
    """A comparison as (slowdown, interval low, interval high, words): the change in words
    (words/change.py: "41.7× slower", "6.0 % faster"); the interval as slowdowns."""
    slow = slowdown(vs.ratio, r.higher_is_better)
    ends = [slowdown(x, r.higher_is_better) for x in (vs.ratio_ci_low, vs.ratio_ci_high)]
    low, high = (min(ends), max(ends)) if None not in ends else (None, None)
    return slow, low, high, sentence(vs.ratio, r.higher_is_better, r.unit)


@dataclass(frozen=True)
class Bar:
    """One bar of a ratio chart: its label, slowdown, interval (slowdowns), words, colour,
    hover text, and where the source's published figure puts it (a slowdown) if anywhere."""
    label: str
    slow: float
    low: float | None
    high: float | None
    words: str
    color: str
    hover: str
    published: float | None = None
    published_hover: str = ""


def result_bars(rows: list[Result], baseline: str | None) -> list[Bar]:
    """A run's rows as bars: every comparison with a ratio."""
    out = []
    for label, r, vs in comparisons(rows, baseline):
        slow, low, high, words = bar_text(r, vs)
        span = interval_words(low, high)
        hover = (f"{escape(label)}<br>{escape(words)}"
                 + (f", interval {span} (as slowdowns)" if span else "")
                 + f"<br>ratio {vs.ratio:.4g} ({escape(r.unit)}, "
                   f"{'higher' if r.higher_is_better else 'lower'} is better)"
                 + f"<br>verdict: {escape(vs.verdict)}")
        pub = r.published
        pub_slow = slowdown(pub.ratio, r.higher_is_better) if pub else None
        if pub_slow is None or (pub.versus or baseline) != vs.reference or vs is not r.vs_baseline:
            pub_slow = None
        pub_hover = ""
        if pub_slow is not None:
            pub_words = sentence(pub.ratio, r.higher_is_better, r.unit)
            pub_hover = (f"published: {escape(pub_words)} vs {escape(vs.reference or '')} "
                         f"({escape(pub.source)})")
        out.append(Bar(label, slow, low, high, words, bar_color(vs.verdict), hover, pub_slow,
                       pub_hover))
    return out


def ratio_figure(rows: list[Result], baseline: str | None, title: str,
                 threshold_pct: float) -> dict | None:
    """One benchmark's comparisons as a log-ratio chart; None when none has a ratio."""
    found = comparisons(rows, baseline)
    if not found:
        return None
    refs = sorted({vs.reference for _, _, vs in found if vs.reference})
    one = f"1 = {refs[0]}" if len(refs) == 1 else "1 = each one's reference"
    return figure(result_bars(rows, baseline), title, threshold_pct,
                  f"times the reference (log scale; {one})",
                  ("← better than the reference", "worse than the reference →"))


def overhead_slowdown(pct: float | None, higher_is_better: bool) -> float | None:
    """An overhead % (positive = worse, stats.ratio.overhead_pct) as a slowdown: lower is
    better 1 + pct/100, higher is better 1 / (1 - pct/100); None beyond the axis (a
    throughput lost entirely)."""
    return slowdown(ratio_of(pct, higher_is_better), higher_is_better)


COMPARE_COLOR = {CompareVerdict.WORSE: FAIL_COLOR, CompareVerdict.BETTER: "#15803d"}


def compare_bars(rows: list[CompareRow]) -> list[Bar]:
    """Two runs' rows as bars: B against A, where A's trimmed mean is not 0."""
    out = []
    for r in rows:
        slow = slowdown(r.ratio, r.higher_is_better)
        if slow is None:
            continue
        ends = [overhead_slowdown(x, r.higher_is_better) for x in (r.ci_low, r.ci_high)]
        low, high = (min(ends), max(ends)) if None not in ends else (None, None)
        label = f"{r.environment} · {r.benchmark} · {r.metric}"
        words = sentence(r.ratio, r.higher_is_better, r.unit, r.change_pct)
        span = interval_words(low, high)
        out.append(Bar(label, slow, low, high, words,
                       COMPARE_COLOR.get(r.verdict, BASELINE_COLOR),
                       f"{escape(label)}<br>B: {escape(words)} than A"
                       + (f", interval {span}" if span else "")
                       + f"<br>verdict: {escape(r.verdict)}"))
    return out


def compare_figure(rows: list[CompareRow], title: str, min_change_pct: float) -> dict | None:
    """The change per metric from run A to run B on the log-ratio axis, A at 1, the
    ±min-change band shaded; None when no row has a ratio."""
    bars = compare_bars(rows)
    if not bars:
        return None
    return figure(bars, title, min_change_pct, "times run A (log scale; 1 = run A)",
                  ("← B better than A", "B worse than A →"), band_name="min-change")


def figure(bars: list[Bar], title: str, threshold_pct: float, axis_title: str,
           sides: tuple[str, str], band_name: str = "band") -> dict:
    """Bars on a log axis centred on 1: each from 1 to its slowdown, its interval as a
    whisker, its words beyond; the ±threshold band shaded."""
    labels, bases, lengths, minus, plus, notes = [], [], [], [], [], []
    reach: list[float] = []
    for b in bars:
        base, length = logscale.bar_span(b.slow)
        down, up = logscale.whisker(b.slow, b.low, b.high)
        labels.append(b.label)
        bases.append(base)
        lengths.append(length)
        minus.append(down)
        plus.append(up)
        reach += [b.slow] + [x for x in (b.low, b.high, b.published) if x is not None]
        x, anchor = logscale.label_anchor(b.slow, b.low, b.high)
        notes.append({"x": x, "y": b.label, "text": escape(b.words), "showarrow": False,
                      "xanchor": anchor, "xshift": 4 if anchor == "left" else -4,
                      "font": {"size": 11, "color": "#111827"}})
    half = logscale.half_width(reach, threshold_pct)
    tickvals = logscale.ticks(half)
    low_edge, high_edge = logscale.band(threshold_pct)
    data = [{"type": "bar", "orientation": "h", "y": labels, "x": lengths, "base": bases,
             "name": "against the reference", "marker": {"color": [b.color for b in bars]},
             "error_x": {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus,
                         "color": "#111827", "thickness": 1.5, "width": 5},
             "hovertext": [b.hover for b in bars], "hoverinfo": "text"}]
    pub = [b for b in bars if b.published is not None]
    if pub:
        data.append({"type": "scatter", "mode": "markers", "x": [b.published for b in pub],
                     "y": [b.label for b in pub], "name": "the source's published ratio",
                     "marker": {"symbol": "diamond", "size": 11, "color": PUBLISHED_COLOR,
                                "line": {"color": "#111827", "width": 1}},
                     "hovertext": [b.published_hover for b in pub], "hoverinfo": "text"})
    shapes = [{"type": "rect", "yref": "paper", "y0": 0, "y1": 1, "x0": low_edge,
               "x1": high_edge, "fillcolor": BAND_COLOR, "opacity": 0.15, "layer": "below",
               "line": {"width": 0}},
              {"type": "line", "yref": "paper", "y0": 0, "y1": 1, "x0": 1, "x1": 1,
               "line": {"color": BASELINE_COLOR, "width": 1.5}}]
    edge = {"yref": "paper", "y": 1, "yanchor": "bottom", "showarrow": False,
            "font": {"size": 11, "color": "#374151"}}
    notes += [{**edge, "x": -half, "xanchor": "left", "text": sides[0]},
              {**edge, "x": half, "xanchor": "right", "text": sides[1]},
              {**edge, "x": 0, "xanchor": "center",
               "text": f"±{threshold_pct:g} % {band_name}",
               "font": {"size": 10, "color": BAND_COLOR}}]
    layout = {"title": {"text": escape(title), "font": {"size": 13}, "x": 0.01,
                        "xanchor": "left"},
              "height": 110 + 30 * len(labels),
              # room for the longest label (plotly's automargin alone clipped it)
              "margin": {"l": min(LABEL_MARGIN_MAX, 24 + 7 * max(map(len, labels))), "r": 20,
                         "t": 56, "b": 44},
              "xaxis": {"type": "log", "range": [-half, half], "tickvals": tickvals,
                        "ticktext": [logscale.tick_text(t) for t in tickvals],
                        "showgrid": True, "gridcolor": "#e5e7eb", "zeroline": False,
                        "title": {"text": escape(axis_title), "font": {"size": 11}}},
              "yaxis": {"automargin": True, "autorange": "reversed", "type": "category",
                        "tickvals": labels, "ticktext": [escape(x) for x in labels]},
              "bargap": 0.35, "showlegend": bool(pub),
              "legend": {"orientation": "h", "x": 1, "xanchor": "right", "y": -0.2},
              "plot_bgcolor": "#ffffff", "shapes": shapes, "annotations": notes,
              "font": {"family": "system-ui, sans-serif", "size": 11}}
    return {"data": data, "layout": layout}
