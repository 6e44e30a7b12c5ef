"""How a paper's figures look (docs/papers.md), shared by every figure of results/report/
figures: the Okabe-Ito palette (colour-blind safe), each environment the same colour in every
figure; one column (3.5 in) or two (7.16 in) wide, a row's height per row; 7-8 pt text and
TrueType fonts embedded (PAPER_RC); PaperFigure, a figure and its name; the axes' helpers
(rows first at the top, a log ratio axis with plain ticks, asymmetric whiskers). Pure."""
from __future__ import annotations

from dataclasses import dataclass

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from ....foundations.model import RunReport

matplotlib.use("Agg")

OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#E69F00", "#56B4E9", "#CC79A7", "#F0E442",
             "#000000")
WIDTHS_IN = {"single": 3.5, "double": 7.16}
BAND_COLOR = "#BBBBBB"
ROW_IN = 0.28                 # height per row of a horizontal chart
MIN_HEIGHT_IN = 1.6
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


def check_width(width: str) -> None:
    """`width` is one WIDTHS_IN names (the CLI's choices; a caller's slip is a ValueError)."""
    if width not in WIDTHS_IN:
        raise ValueError(f"width {width!r}: single or double")


def sized_figure(width: str, height_in: float) -> Figure:
    """A figure a column (single) or two (double) wide, `height_in` high, laid out by
    matplotlib's constrained layout."""
    check_width(width)
    return Figure(figsize=(WIDTHS_IN[width], height_in), layout="constrained")


def new_figure(width: str, rows: int) -> Figure:
    """A horizontal chart's figure: a row's height per row, MIN_HEIGHT_IN at least."""
    return sized_figure(width, max(MIN_HEIGHT_IN, ROW_IN * rows + 0.9))


def whiskers(centre: list[float], low: list[float | None], high: list[float | None]):
    """Asymmetric error-bar lengths ([below], [above]); 0 where the interval is missing."""
    below = [0.0 if lo is None else max(0.0, c - lo) for c, lo in zip(centre, low)]
    above = [0.0 if hi is None else max(0.0, hi - c) for c, hi in zip(centre, high)]
    return [below, above]


def rows_axis(ax, labels: list[str]) -> None:
    """A horizontal chart's rows: first at the top, half a row of room above and below."""
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)


def log_ticks(ax, lo: float, hi: float) -> None:
    """The ratio axis from lo to hi, its ticks plain numbers (1.2, not 1.2 x 10^0): within
    a span of 20x, at 1, 1.2, 1.5, 2, 3, 5, 7 of each decade, else at the decades."""
    ax.set_xlim(lo, hi)
    if hi / lo < 20:
        ax.xaxis.set_major_locator(LogLocator(subs=(1, 1.2, 1.5, 2, 3, 5, 7), numticks=30))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:.3g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


CHARS_PER_IN = 16             # legend text at 7 pt, a marker and its gap included


def legend_below(fig: Figure, labels: list[str], width: str) -> None:
    """The figure's legend under its axes, in as many columns as the longest label lets fit
    the figure's width (one column of long labels rather than a legend wider than the
    figure, which would squeeze the axes to nothing)."""
    longest = max((len(lab) for lab in labels), default=1) + 4
    fit = max(1, int(WIDTHS_IN[width] * CHARS_PER_IN) // longest)
    fig.legend(loc="outside lower center", frameon=False, ncols=min(fit, len(labels)))
