"""A paper's figures of a run's report (docs/papers.md): matplotlib figures, one per benchmark
× metric and kind, in style.py's look (a column or two wide, the Okabe-Ito palette, each
environment the same colour in every figure).

ratio    each environment against its reference (vs_baseline): the ratio on a log axis with
         its interval as a whisker, the ±threshold band shaded ([1 - T, 1 + T], as the
         decision reads it: foundations/stats/band.py), a line at 1
values   each environment's trimmed mean with its interval (ci_low/high)
samples  each environment's raw samples by trial (one point per sample)
tune     a tune run's effects, as figures/tunechart.py draws them: effect % with its
         interval, the ±min-effect band, the marker and colour saying the decision
exits    the exits breakdown per profiled benchmark; price: the price list (breakdowns.py)
density  a density sweep's curves (densitypaper.py)
study    the figures the run's study declares ([[figure]], a verdicts [[table]]: its
         paper's own; declared.py), drawn after the others

Pure: report in, [(name, Figure)] out; nothing is drawn to a screen or written (save.py
renders the bytes). matplotlib is imported by the caller's use of this module only
(`virtbench figures`), never by the CLI's start."""
from __future__ import annotations

import math

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ....core.decisions import KnobEffect
from ....foundations.model import Result, RunReport, TuneEffect
from ....foundations.stats.band import band as ratio_band
from . import breakdowns, declared, densitypaper
from .style import (BAND_COLOR, OKABE_ITO, PAPER_RC, PaperFigure, colours, legend_below,
                    log_ticks, new_figure, rows_axis, whiskers)
from .tunechart import band as effect_band, label as effect_label

# a decision's colour and marker (filled but for undecided)
DECISION_STYLE = {KnobEffect.MATTERS: (OKABE_ITO[1], "o"),
                  KnobEffect.NO_EFFECT: (OKABE_ITO[0], "s"),
                  KnobEffect.UNDECIDED: (OKABE_ITO[7], "D")}


def _groups(report: RunReport) -> list[tuple[str, str, list[Result]]]:
    """The results per benchmark × metric, in the report's order."""
    order: dict[tuple[str, str], list[Result]] = {}
    for r in report.results:
        order.setdefault((r.benchmark, r.metric), []).append(r)
    return [(b, m, rows) for (b, m), rows in order.items()]


def ratio_figure(rows: list[Result], title: str, threshold_pct: float, palette: dict,
                 width: str) -> Figure | None:
    """The environments against their reference on one metric; None when none has one."""
    rows = [r for r in rows if r.vs_baseline is not None and r.vs_baseline.ratio > 0]
    if not rows:
        return None
    fig = new_figure(width, len(rows))
    ax = fig.add_subplot()
    ax.set_xscale("log")
    lo, hi = (math.exp(x) for x in ratio_band(threshold_pct))
    ax.axvspan(lo, hi, color=BAND_COLOR, alpha=0.35, lw=0,
               label=f"±{threshold_pct:g} % band")
    ax.axvline(1.0, color="#000000", lw=0.6)
    for y, r in enumerate(rows):
        v = r.vs_baseline
        ax.errorbar([v.ratio], [y], xerr=whiskers([v.ratio], [v.ratio_ci_low],
                                                   [v.ratio_ci_high]),
                    fmt="o", ms=4, capsize=2, lw=1, color=palette[r.environment])
    reach = [x for r in rows for x in (r.vs_baseline.ratio, r.vs_baseline.ratio_ci_low,
                                       r.vs_baseline.ratio_ci_high) if x and x > 0]
    log_ticks(ax, min([*reach, lo]) / 1.05, max([*reach, hi]) * 1.05)
    rows_axis(ax, [r.environment for r in rows])
    ax.set_xlabel(f"ratio to reference ({'higher' if rows[0].higher_is_better else 'lower'}"
                  " is better)")
    ax.set_title(title)
    ax.legend(loc="best", frameon=False)
    return fig


def values_figure(rows: list[Result], title: str, palette: dict, width: str) -> Figure | None:
    """Each environment's trimmed mean on one metric, its interval as a whisker; an
    environment without a sample (every trial failed) is left out, None when all are."""
    rows = [r for r in rows if r.n > 0 or r.samples]
    if not rows:
        return None
    fig = new_figure(width, len(rows))
    ax = fig.add_subplot()
    for y, r in enumerate(rows):
        ax.errorbar([r.trimmed_mean], [y], xerr=whiskers([r.trimmed_mean], [r.ci_low],
                                                          [r.ci_high]),
                    fmt="o", ms=4, capsize=2, lw=1, color=palette[r.environment])
    rows_axis(ax, [r.environment for r in rows])
    ax.set_xlabel(f"trimmed mean ({rows[0].unit})" if rows[0].unit else "trimmed mean")
    ax.set_title(title)
    return fig


def samples_figure(rows: list[Result], title: str, palette: dict, width: str) -> Figure | None:
    """Each environment's samples by trial (its sample's index when trials are missing)."""
    rows = [r for r in rows if r.samples]
    if not rows:
        return None
    fig = new_figure(width, 4)
    ax = fig.add_subplot()
    for r in rows:
        trials = r.trials if len(r.trials) == len(r.samples) else range(1, len(r.samples) + 1)
        ax.plot(list(trials), r.samples, ls="none", marker="o", ms=3,
                color=palette[r.environment], label=r.environment)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("trial (block)")
    ax.set_ylabel(rows[0].unit or rows[0].metric)
    ax.set_title(title)
    legend_below(fig, [r.environment for r in rows], width)
    return fig


def tune_figure(effects: list[TuneEffect], title: str, min_effect_pct: float,
                width: str) -> Figure:
    """One metric's knob effects (%), intervals as whiskers, the ±min-effect band; an effect
    with no estimate is the text "not estimated" at 0."""
    fig = new_figure(width, len(effects))
    ax = fig.add_subplot()
    lo, hi = effect_band(min_effect_pct)
    ax.axvspan(lo, hi, color=BAND_COLOR, alpha=0.35, lw=0, label="no-effect band")
    ax.axvline(0.0, color="#000000", lw=0.6)
    shown: set[str] = set()
    for y, e in enumerate(effects):
        if e.effect_pct is None:
            ax.text(0.0, y, " not estimated", va="center", fontsize=7, color="#555555")
            continue
        colour, marker = DECISION_STYLE[KnobEffect(e.decision)]
        ax.errorbar([e.effect_pct], [y], xerr=whiskers([e.effect_pct], [e.low_pct],
                                                        [e.high_pct]),
                    fmt=marker, ms=4, capsize=2, lw=1, color=colour,
                    mfc="none" if e.decision == KnobEffect.UNDECIDED else colour,
                    label=None if e.decision in shown else str(e.decision))
        shown.add(e.decision)
    reach = [abs(x) for e in effects for x in (e.effect_pct, e.low_pct, e.high_pct)
             if x is not None]
    half = 1.15 * max([*reach, float(min_effect_pct), 1.0])
    ax.set_xlim(-half, half)
    rows_axis(ax, [effect_label(e) for e in effects])
    ax.set_xlabel("effect, first level to second (%)")
    ax.set_title(title)
    ax.legend(loc="best", frameon=False)
    return fig


def _tune_figures(report: RunReport, width: str) -> list[PaperFigure]:
    tune = report.tune
    if tune is None:
        return []
    per: dict[tuple[str, str], list[TuneEffect]] = {}
    for e in [*tune.knobs, *tune.interactions]:
        per.setdefault((e.benchmark, e.metric), []).append(e)
    return [PaperFigure(f"tune-{b}-{m}", tune_figure(effects, f"{b}: {m}",
                                                     float(tune.min_effect_pct), width))
            for (b, m), effects in per.items()]


def paper_figures(report: RunReport, width: str = "single") -> list[PaperFigure]:
    """Every figure of the report: per benchmark × metric its ratio (when it has a reference),
    values and samples; a tune run's effects per metric; the exits breakdown per profiled
    benchmark and the price list (breakdowns.py); a density sweep's curves (densitypaper.py);
    the study's own figures (declared.py)."""
    palette = colours(report)
    out: list[PaperFigure] = []
    with matplotlib.rc_context(PAPER_RC):
        for bench, metric, rows in _groups(report):
            title = f"{bench}: {metric}"
            made = [("ratio", ratio_figure(rows, title, float(report.run.threshold_pct),
                                           palette, width)),
                    ("values", values_figure(rows, title, palette, width)),
                    ("samples", samples_figure(rows, title, palette, width))]
            out += [PaperFigure(f"{kind}-{bench}-{metric}", fig) for kind, fig in made
                    if fig is not None]
        out += _tune_figures(report, width)
        out += breakdowns.exits_figures(report, width) + breakdowns.price_figures(report, width)
    out += densitypaper.density_figures(report, width)       # a density sweep's run
    out += declared.declared_figures(report, width)          # the study's own, last
    return out
