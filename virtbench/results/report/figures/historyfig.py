"""A paper's figures of a run's history (`virtbench figures RUN --history`, docs/papers.md):
each history series the run is a point of (results/history: the store's complete runs of
its host and series lined up per environment, benchmark and metric), drawn up to the run:
each run's value (or ratio to its reference) with its interval as a whisker, the run drawn
as an open ring around its point, and each change the history found before it as a dashed
line between the runs it separates, labelled confirmed or suspected with its first fact.

Pure: a HistoryReport in, PaperFigures out, in style.py's look; a series of one run up to
the run is not a history and gives no figure."""
from __future__ import annotations

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator

from ....foundations.model.history import HistoryChange, HistoryReport, HistorySeries
from .style import OKABE_ITO, PAPER_RC, PaperFigure, new_figure

SHOWN_STATUS = ("confirmed", "suspected")      # the changes drawn; others are not changes


def up_to(series: HistorySeries, run_id: str) -> HistorySeries | None:
    """The series cut after `run_id`'s point, its changes before it; None when the run is
    not in it or it has no point before the run."""
    ids = [p.run for p in series.points]
    if run_id not in ids or ids.index(run_id) == 0:
        return None
    end = ids.index(run_id) + 1
    return series.model_copy(update={
        "points": series.points[:end],
        "changes": [c for c in series.changes if c.index < end]})


def title(series: HistorySeries) -> str:
    what = (f"{series.environment} / {series.reference}" if series.kind == "ratio"
            else series.environment)
    return f"{what} · {series.benchmark}: {series.metric}"


def change_label(change: HistoryChange) -> str:
    first = change.facts[0].words if change.facts else "drift"
    return f"{change.status}: {first}"


def history_figure(series: HistorySeries, run_id: str, width: str) -> Figure:
    """One series up to the run (cut by up_to)."""
    fig = new_figure(width, 5)
    ax = fig.add_subplot()
    points = series.points
    xs = list(range(len(points)))
    for x, p in zip(xs, points):
        if p.value is None:
            continue
        below = 0.0 if p.ci_low is None else max(0.0, p.value - p.ci_low)
        above = 0.0 if p.ci_high is None else max(0.0, p.ci_high - p.value)
        ax.errorbar([x], [p.value], yerr=[[below], [above]], fmt="o", ms=3.5, capsize=2,
                    lw=1, color=OKABE_ITO[0])
        if p.run == run_id:
            ax.plot([x], [p.value], ls="none", marker="o", ms=9, mfc="none",
                    color=OKABE_ITO[7], label=f"run {run_id}")
    if series.kind == "ratio":
        ax.axhline(1.0, color="#000000", lw=0.6)
    for c in series.changes:
        if c.status in SHOWN_STATUS:
            ax.axvline(c.index - 0.5, color=OKABE_ITO[1], lw=0.8, ls="--")
            ax.text(c.index - 0.45, 0.98, change_label(c), transform=ax.get_xaxis_transform(),
                    va="top", ha="left", fontsize=6, color=OKABE_ITO[1])
    ax.xaxis.set_major_locator(FixedLocator(xs))
    ax.set_xticklabels([(p.started or p.run)[:10] for p in points], rotation=30, ha="right")
    ax.set_xlim(-0.5, len(points) - 0.5)
    ax.set_ylabel(f"ratio to {series.reference}" if series.kind == "ratio"
                  else (series.unit or series.metric))
    ax.set_title(title(series))
    ax.legend(loc="lower left", frameon=False)
    return fig


def history_figures(history: HistoryReport, run_id: str, width: str) -> list[PaperFigure]:
    """A figure per series the run is a point of, with a point before it."""
    out = []
    with matplotlib.rc_context(PAPER_RC):
        for s in history.series:
            cut = up_to(s, run_id)
            if cut is not None:
                ref = f"-{s.reference}" if s.kind == "ratio" else ""
                out.append(PaperFigure(f"history-{s.environment}{ref}-{s.benchmark}-"
                                       f"{s.metric}", history_figure(cut, run_id, width)))
    return out
