"""A paper's figures of a run's report (docs/papers.md): matplotlib figures, one per benchmark
× metric and kind, sized for a column (3.5 in) or two (7.16 in), in the Okabe-Ito palette
(colour-blind safe), each environment the same colour in every figure.

ratio    each environment against its reference (vs_baseline): the ratio on a log axis with
         its interval as a whisker, the ±threshold band shaded ([1 - T, 1 + T], as the
         decision reads it: foundations/stats/band.py), a line at 1
values   each environment's trimmed mean with its interval (ci_low/high)
samples  each environment's raw samples by trial (one point per sample)
tune     a tune run's effects, as figures/tunechart.py draws them: effect % with its
         interval, the ±min-effect band, the marker and colour saying the decision
(the figures the run's study declares, [[figure]], are figures/declared.py's, drawn after these)

Pure: report in, [(name, Figure)] out; nothing is drawn to a screen or written (save.py
renders the bytes). matplotlib is imported by the caller's use of this module only
(`virtbench figures`), never by the CLI's start."""
from __future__ import annotations

import math
from dataclasses import dataclass

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from ....core.decisions import KnobEffect
from ....foundations.model import Result, RunReport, TuneEffect
from ....foundations.stats.band import band as ratio_band
from .tunechart import band as effect_band, label as effect_label

matplotlib.use("Agg")

OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#E69F00", "#56B4E9", "#CC79A7", "#F0E442",
             "#000000")
WIDTHS_IN = {"single": 3.5, "double": 7.16}
BAND_COLOR = "#BBBBBB"
ROW_IN = 0.28                 # height per row of a horizontal chart
MIN_HEIGHT_IN = 1.6
# a decision's colour and marker (filled but for undecided)
DECISION_STYLE = {KnobEffect.MATTERS: (OKABE_ITO[1], "o"),
                  KnobEffect.NO_EFFECT: (OKABE_ITO[0], "s"),
                  KnobEffect.UNDECIDED: (OKABE_ITO[7], "D")}
PAPER_RC = {"pdf.fonttype": 42, "ps.fonttype": 42, "font.size": 8, "axes.titlesize": 8,
            "axes.labelsize": 8, "xtick.labelsize": 7, "ytick.labelsize": 7,
            "legend.fontsize": 7, "savefig.bbox": "tight", "savefig.pad_inches": 0.02,
            "svg.hashsalt": "virtbench"}


@dataclass(frozen=True)
class PaperFigure:
    """One figure and its name (kind-benchmark-metric, before save.py makes it a file
    name)."""
    name: str
    figure: Figure


def colours(report: RunReport) -> dict[str, str]:
    """Each environment's colour, by its place in the report (the same in every figure)."""
    labels = [e.label for e in report.environments]
    labels += sorted({r.environment for r in report.results} - set(labels))
    return {lab: OKABE_ITO[i % len(OKABE_ITO)] for i, lab in enumerate(labels)}


def _figure(width: str, rows: int) -> Figure:
    if width not in WIDTHS_IN:
        raise ValueError(f"width {width!r}: single or double")
    height = max(MIN_HEIGHT_IN, ROW_IN * rows + 0.9)
    return Figure(figsize=(WIDTHS_IN[width], height), layout="constrained")


def _groups(report: RunReport) -> list[tuple[str, str, list[Result]]]:
    """The results per benchmark × metric, in the report's order."""
    order: dict[tuple[str, str], list[Result]] = {}
    for r in report.results:
        order.setdefault((r.benchmark, r.metric), []).append(r)
    return [(b, m, rows) for (b, m), rows in order.items()]


def _whiskers(centre: list[float], low: list[float | None], high: list[float | None]):
    """Asymmetric error-bar lengths ([below], [above]); 0 where the interval is missing."""
    below = [0.0 if lo is None else max(0.0, c - lo) for c, lo in zip(centre, low)]
    above = [0.0 if hi is None else max(0.0, hi - c) for c, hi in zip(centre, high)]
    return [below, above]


def _rows_axis(ax, labels: list[str]) -> None:
    """A horizontal chart's rows: first at the top, half a row of room above and below."""
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)


def _log_ticks(ax, lo: float, hi: float) -> None:
    """The ratio axis from lo to hi, its ticks plain numbers (1.2, not 1.2 x 10^0): within
    a span of 20x, at 1, 1.2, 1.5, 2, 3, 5, 7 of each decade, else at the decades."""
    ax.set_xlim(lo, hi)
    if hi / lo < 20:
        ax.xaxis.set_major_locator(LogLocator(subs=(1, 1.2, 1.5, 2, 3, 5, 7), numticks=30))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:.3g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def ratio_figure(rows: list[Result], title: str, threshold_pct: float, palette: dict,
                 width: str) -> Figure | None:
    """The environments against their reference on one metric; None when none has one."""
    rows = [r for r in rows if r.vs_baseline is not None and r.vs_baseline.ratio > 0]
    if not rows:
        return None
    fig = _figure(width, len(rows))
    ax = fig.add_subplot()
    ax.set_xscale("log")
    lo, hi = (math.exp(x) for x in ratio_band(threshold_pct))
    ax.axvspan(lo, hi, color=BAND_COLOR, alpha=0.35, lw=0,
               label=f"±{threshold_pct:g} % band")
    ax.axvline(1.0, color="#000000", lw=0.6)
    for y, r in enumerate(rows):
        v = r.vs_baseline
        ax.errorbar([v.ratio], [y], xerr=_whiskers([v.ratio], [v.ratio_ci_low],
                                                   [v.ratio_ci_high]),
                    fmt="o", ms=4, capsize=2, lw=1, color=palette[r.environment])
    reach = [x for r in rows for x in (r.vs_baseline.ratio, r.vs_baseline.ratio_ci_low,
                                       r.vs_baseline.ratio_ci_high) if x and x > 0]
    _log_ticks(ax, min([*reach, lo]) / 1.05, max([*reach, hi]) * 1.05)
    _rows_axis(ax, [r.environment for r in rows])
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
    fig = _figure(width, len(rows))
    ax = fig.add_subplot()
    for y, r in enumerate(rows):
        ax.errorbar([r.trimmed_mean], [y], xerr=_whiskers([r.trimmed_mean], [r.ci_low],
                                                          [r.ci_high]),
                    fmt="o", ms=4, capsize=2, lw=1, color=palette[r.environment])
    _rows_axis(ax, [r.environment for r in rows])
    ax.set_xlabel(f"trimmed mean ({rows[0].unit})" if rows[0].unit else "trimmed mean")
    ax.set_title(title)
    return fig


def samples_figure(rows: list[Result], title: str, palette: dict, width: str) -> Figure | None:
    """Each environment's samples by trial (its sample's index when trials are missing)."""
    rows = [r for r in rows if r.samples]
    if not rows:
        return None
    fig = _figure(width, 4)
    ax = fig.add_subplot()
    for r in rows:
        trials = r.trials if len(r.trials) == len(r.samples) else range(1, len(r.samples) + 1)
        ax.plot(list(trials), r.samples, ls="none", marker="o", ms=3,
                color=palette[r.environment], label=r.environment)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("trial (block)")
    ax.set_ylabel(rows[0].unit or rows[0].metric)
    ax.set_title(title)
    ax.legend(loc="best", frameon=False, ncols=min(3, len(rows)))
    return fig


def tune_figure(effects: list[TuneEffect], title: str, min_effect_pct: float,
                width: str) -> Figure:
    """One metric's knob effects (%), intervals as whiskers, the ±min-effect band; an effect
    with no estimate is the text "not estimated" at 0."""
    fig = _figure(width, len(effects))
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
        ax.errorbar([e.effect_pct], [y], xerr=_whiskers([e.effect_pct], [e.low_pct],
                                                        [e.high_pct]),
                    fmt=marker, ms=4, capsize=2, lw=1, color=colour,
                    mfc="none" if e.decision == KnobEffect.UNDECIDED else colour,
                    label=None if e.decision in shown else str(e.decision))
        shown.add(e.decision)
    reach = [abs(x) for e in effects for x in (e.effect_pct, e.low_pct, e.high_pct)
             if x is not None]
    half = 1.15 * max([*reach, float(min_effect_pct), 1.0])
    ax.set_xlim(-half, half)
    _rows_axis(ax, [effect_label(e) for e in effects])
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
    values and samples; a tune run's effects per metric."""
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
    return out
