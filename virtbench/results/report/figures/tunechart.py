"""A tune run's effects chart (the HTML report's Tune section, docs/tune.md): per benchmark ×
metric, one point per knob, and per interaction the design resolves, at its effect in %
from its first level to its second (an interaction: from mixed levels to alike, its
product's sign), its (Bonferroni) interval as a whisker, on a linear axis centred on 0; the
±min-effect band shaded, inside which an effect is "no effect" (a change of min % either
way of the ratio, as the decision reads it: -4.76 % to +5 % for 5 %). Colour and marker say
the decision (matters / no effect / undecided), the hover says it in words (words/tune.py).
An effect with no estimate is drawn as the text "not estimated" at 0, never left out. A
plotly figure spec (a plain dict); pure."""
from __future__ import annotations

from dataclasses import dataclass
from html import escape

from ....foundations.model import RunReport
from ....foundations.model.tune import TuneEffect, TuneReport
from ..charts import BASELINE_COLOR, PASS_COLOR, UNDECIDED_COLOR
from ....core.decisions import KnobEffect
from ..words import tune as words

BAND_COLOR = "#16a34a"
NOT_ESTIMATED = "not estimated"
# a decision's colour and marker, in legend order
DECISION_STYLE = {KnobEffect.MATTERS: (PASS_COLOR, "circle"),
                  KnobEffect.NO_EFFECT: (BASELINE_COLOR, "square"),
                  KnobEffect.UNDECIDED: (UNDECIDED_COLOR, "diamond-open")}
LABEL_MARGIN_MAX = 320          # px


@dataclass(frozen=True)
class EffectPoint:
    """One knob's (or interaction's) point: its axis label, effect and interval in %, its
    decision and hover text."""
    label: str
    effect: float | None
    low: float | None
    high: float | None
    decision: str
    hover: str


def label(effect: TuneEffect) -> str:
    """The axis label: "cpus 0.5→2" (a knob's levels, first to second), "cpus×mem
    mixed→alike" (an interaction)."""
    if len(effect.levels) >= 2:
        return f"{effect.knob} {effect.levels[0]}→{effect.levels[1]}"
    return f"{effect.knob} mixed→alike"


def point(effect: TuneEffect, min_effect_pct: float, unit: str,
          higher_is_better: bool) -> EffectPoint:
    """An effect as a point, its hover: the decision in words, the figures, the blocks."""
    said = (words.knob_words(effect, min_effect_pct, unit, higher_is_better)
            if effect.effect_pct is not None or effect.decision != KnobEffect.MATTERS
            else f"{effect.knob}: matters")      # words need the estimate to say how
    lines = [escape(label(effect)), escape(said), f"decision: {escape(effect.decision)}"]
    if effect.effect_pct is None:
        lines.append(NOT_ESTIMATED)
    else:
        interval = ("" if effect.low_pct is None or effect.high_pct is None
                    else f" [{effect.low_pct:+.1f}, {effect.high_pct:+.1f}]")
        way = "first to second level" if effect.levels else "mixed levels to alike"
        lines.append(f"{way}: {effect.effect_pct:+.1f} %{interval}, {effect.blocks} blocks")
    if not effect.levels:
        lines.append("interaction: the change from mixed levels to alike (both first or "
                     "both second)")
    return EffectPoint(label(effect), effect.effect_pct, effect.low_pct, effect.high_pct,
                       effect.decision, "<br>".join(lines))


def _traces(points: list[EffectPoint]) -> list[dict]:
    """One trace per decision present (its colour and marker, in the legend), the interval
    as asymmetric error bars; the effects not estimated as text at 0."""
    data = []
    for decision, (color, symbol) in DECISION_STYLE.items():
        mine = [p for p in points if p.decision == decision and p.effect is not None]
        if not mine:
            continue
        data.append({"type": "scatter", "mode": "markers", "name": decision,
                     "x": [p.effect for p in mine], "y": [p.label for p in mine],
                     "marker": {"color": color, "symbol": symbol, "size": 11,
                                "line": {"color": color, "width": 2}},
                     "error_x": {"type": "data", "symmetric": False,
                                 "array": [_reach(p.high, p.effect) for p in mine],
                                 "arrayminus": [_reach(p.effect, p.low) for p in mine],
                                 "color": color, "thickness": 1.5, "width": 6},
                     "hovertext": [p.hover for p in mine], "hoverinfo": "text"})
    missing = [p for p in points if p.effect is None]
    if missing:
        data.append({"type": "scatter", "mode": "text", "name": NOT_ESTIMATED,
                     "x": [0.0] * len(missing), "y": [p.label for p in missing],
                     "text": [NOT_ESTIMATED] * len(missing), "textposition": "middle right",
                     "textfont": {"color": "#6b7280", "size": 11}, "showlegend": False,
                     "hovertext": [p.hover for p in missing], "hoverinfo": "text"})
    return data


def _reach(a: float | None, b: float | None) -> float:
    """A whisker's length from b up to a (0 without an interval)."""
    return 0.0 if a is None or b is None else max(0.0, a - b)


def band(min_effect_pct: float) -> tuple[float, float]:
    """The "no effect" zone in % as the decision draws it (foundations/stats/screening/
    effects.py): ±ln(1 + min/100) on the log scale, so from a min% drop of the ratio,
    100/(1 + min/100) - 100 (-4.76 % for 5 %), to +min %."""
    return 100 / (1 + min_effect_pct / 100) - 100, float(min_effect_pct)


def half_width(points: list[EffectPoint], min_effect_pct: float) -> float:
    """The axis' half width: every point, whisker and the band in view, with some room."""
    reach = [abs(x) for p in points for x in (p.effect, p.low, p.high) if x is not None]
    return 1.15 * max([*reach, float(min_effect_pct), 1.0])


def effects_figure(effects: list[TuneEffect], min_effect_pct: float, title: str, unit: str,
                   higher_is_better: bool) -> dict:
    """One metric's effects: a point per knob and interaction, the ±min-effect band."""
    points = [point(e, min_effect_pct, unit, higher_is_better) for e in effects]
    labels = [p.label for p in points]
    half = half_width(points, min_effect_pct)
    low, high = band(min_effect_pct)
    shapes = [{"type": "rect", "yref": "paper", "y0": 0, "y1": 1, "x0": low,
               "x1": high, "fillcolor": BAND_COLOR, "opacity": 0.15,
               "layer": "below", "line": {"width": 0}},
              {"type": "line", "yref": "paper", "y0": 0, "y1": 1, "x0": 0, "x1": 0,
               "line": {"color": BASELINE_COLOR, "width": 1.5}}]
    note = {"yref": "paper", "y": 1, "yanchor": "bottom", "showarrow": False, "x": 0,
            "xanchor": "center", "text": f"±{min_effect_pct:g} %: no effect",
            "font": {"size": 10, "color": BAND_COLOR}}
    direction = "higher" if higher_is_better else "lower"
    axis = (f"change from the first level to the second, % ({unit + ', ' if unit else ''}"
            f"{direction} is better)")
    layout = {"title": {"text": escape(title), "font": {"size": 13}, "x": 0.01,
                        "xanchor": "left"},
              "height": 120 + 32 * len(labels),
              "margin": {"l": min(LABEL_MARGIN_MAX, 24 + 7 * max(map(len, labels))),
                         "r": 20, "t": 64, "b": 44},
              "xaxis": {"range": [-half, half], "zeroline": False, "showgrid": True,
                        "gridcolor": "#e5e7eb", "ticksuffix": " %",
                        "title": {"text": escape(axis), "font": {"size": 11}}},
              "yaxis": {"type": "category", "autorange": "reversed", "automargin": True,
                        "categoryorder": "array", "categoryarray": labels,
                        "tickvals": labels, "ticktext": [escape(x) for x in labels]},
              "showlegend": True,
              "legend": {"orientation": "h", "x": 1, "xanchor": "right", "y": 1.0,
                         "yanchor": "bottom", "font": {"size": 10}},
              "plot_bgcolor": "#ffffff", "shapes": shapes, "annotations": [note],
              "font": {"family": "system-ui, sans-serif", "size": 11}}
    return {"data": _traces(points), "layout": layout}


def metric_figures(report: RunReport) -> list[dict]:
    """A tune run's effects charts, one per benchmark × metric in the order the tune gives
    them (its knobs, then its interactions); [] for a run that is not a tune."""
    tune: TuneReport | None = report.tune
    if tune is None:
        return []
    groups: dict[tuple[str, str], list[TuneEffect]] = {}
    for effect in [*tune.knobs, *tune.interactions]:
        groups.setdefault((effect.benchmark, effect.metric), []).append(effect)
    units = {(r.benchmark, r.metric_id.base): (r.unit, r.higher_is_better)
             for r in report.results}
    out = []
    for (bench, metric), effects in groups.items():
        unit, higher = units.get((bench, metric), ("", True))
        out.append(effects_figure(effects, tune.min_effect_pct,
                                  f"{bench} · {metric}: each knob's effect, first level to "
                                  "second", unit, higher))
    return out
