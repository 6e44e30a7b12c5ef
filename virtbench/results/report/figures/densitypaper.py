"""A density sweep's paper figure (`virtbench figures SWEEP_ID`; docs/lifecycle.md): per
judged curve, two panels sharing the guest count. Above, the aggregate throughput with its
95 % interval, and the reference curve (native processes at the same counts) dashed grey on
its own right axis when the sweep ran one; below, each guest's throughput as a point, the
slowest guest as a line and the QoS floor (the floor share of one guest's throughput)
dotted. The knee is marked on both. Pure, as paper.py (whose look, style.py, it shares):
report in, figures out; `virtbench figures` draws these beside paper.py's (a sweep's run
has none of those)."""
from __future__ import annotations

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ....foundations.model import RunReport
from ....foundations.model.density import DensityCurve
from .style import OKABE_ITO, PAPER_RC, PaperFigure, sized_figure, whiskers

HEIGHT_IN = 3.6
REFERENCE_COLOR, FLOOR_COLOR = "#888888", "#555555"
AGGREGATE_COLOR, GUEST_COLOR, KNEE_COLOR = OKABE_ITO[0], OKABE_ITO[1], OKABE_ITO[5]


def _aggregate(ax, curve: DensityCurve, reference: DensityCurve | None) -> None:
    counts = [s.count for s in curve.steps]
    means = [s.aggregate.mean for s in curve.steps]
    ax.errorbar(counts, means, yerr=whiskers(means, [s.aggregate.ci_low for s in curve.steps],
                                              [s.aggregate.ci_high for s in curve.steps]),
                fmt="o-", ms=3, capsize=2, lw=1, color=AGGREGATE_COLOR, label="aggregate")
    ax.set_ylabel(f"aggregate ({curve.unit})" if curve.unit else "aggregate")
    ax.set_ylim(bottom=0)
    handles, labels = ax.get_legend_handles_labels()
    if reference is not None and reference.steps:
        right = ax.twinx()
        right.plot([s.count for s in reference.steps],
                   [s.aggregate.mean for s in reference.steps], ls="--", marker="s", ms=2.5,
                   lw=0.9, color=REFERENCE_COLOR, label="native (reference, right axis)")
        right.set_ylabel(f"native ({curve.unit})" if curve.unit else "native")
        right.set_ylim(bottom=0)
        more = right.get_legend_handles_labels()
        handles, labels = handles + more[0], labels + more[1]
    ax.legend(handles, labels, loc="best", frameon=False)


def _guests(ax, curve: DensityCurve, floor: float) -> None:
    for i, s in enumerate(curve.steps):
        ax.plot([s.count] * len(s.per_guest), [g.mean for g in s.per_guest], ls="none",
                marker="o", ms=2.5, alpha=0.7, color=GUEST_COLOR,
                label="each guest" if i == 0 else None)
    steps = [s for s in curve.steps if s.per_guest]
    ax.plot([s.count for s in steps], [min(g.mean for g in s.per_guest) for s in steps],
            lw=1, color=GUEST_COLOR, label="slowest guest")
    if steps:
        one = min(steps, key=lambda s: s.count)
        ax.axhline(floor * min(g.mean for g in one.per_guest), color=FLOOR_COLOR, ls=":",
                   lw=0.9, label=f"QoS floor ({floor:.0%} of one guest)")
    ax.set_ylabel(f"per guest ({curve.unit})" if curve.unit else "per guest")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("guests at once")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="best", frameon=False)


def density_figure(curve: DensityCurve, reference: DensityCurve | None, floor: float,
                   width: str) -> Figure:
    """One judged curve (module docstring)."""
    fig = sized_figure(width, HEIGHT_IN)
    top, bottom = fig.subplots(2, 1, sharex=True)
    _aggregate(top, curve, reference)
    _guests(bottom, curve, floor)
    if curve.knee is not None:
        for ax in (top, bottom):
            ax.axvline(curve.knee, color=KNEE_COLOR, lw=0.9)
        top.annotate(f"knee: {curve.knee} ({curve.stop_reason or 'still scaling'})",
                     (curve.knee, 1), xycoords=("data", "axes fraction"), ha="center",
                     va="bottom", fontsize=7, color=KNEE_COLOR)
    fig.suptitle(f"{curve.benchmark}: {curve.metric} ({curve.environment})")
    return fig


def density_figures(report: RunReport, width: str = "single") -> list[PaperFigure]:
    """A density sweep's run: a figure per judged curve (none for other runs)."""
    sweep = report.density
    if sweep is None:
        return []
    refs = {c.benchmark: c for c in sweep.curves if c.reference}
    with matplotlib.rc_context(PAPER_RC):
        return [PaperFigure(f"density-{c.benchmark}-{c.metric}",
                            density_figure(c, refs.get(c.benchmark),
                                           float(sweep.rule.per_guest_floor), width))
                for c in sweep.curves if not c.reference and c.steps]
