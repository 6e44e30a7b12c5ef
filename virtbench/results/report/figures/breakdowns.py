"""A paper's figures of what a run explains (docs/papers.md): the exits breakdown of its
exit profiles and its price list.

exits   per benchmark: each profiled environment's exits by reason, as shares of its
        exits stacked in one bar (the most frequent reasons over the benchmark's profiles
        each in a colour, the rest as "other"), its count of exits at the bar's end
price   per price list: each primitive's ratio to the baseline on a log axis, a point per
        environment, a line at 1 (the primitives measured in no guest left out)

Pure: report in, PaperFigures out, drawn in style.py's palette, sizes and rc."""
from __future__ import annotations

from matplotlib.figure import Figure

from ....foundations.model import RunReport
from ....foundations.model.pricelist import PriceList
from ....foundations.model.profile import Profile
from .style import (OKABE_ITO, PaperFigure, colours, legend_below, log_ticks, new_figure,
                    rows_axis)

SHOWN_REASONS = len(OKABE_ITO) - 1      # the rest are "other", in grey
OTHER_COLOUR = "#BBBBBB"


def top_reasons(profiles: list[Profile], shown: int = SHOWN_REASONS) -> list[str]:
    """The reasons drawn in their own colour: the `shown` with the largest share summed
    over the profiles (ties by name), in that order."""
    total: dict[str, float] = {}
    for p in profiles:
        for row in p.by_reason:
            total[row.reason] = total.get(row.reason, 0.0) + row.share_pct
    return sorted(total, key=lambda r: (-total[r], r))[:shown]


def shares(profile: Profile, reasons: list[str]) -> list[float]:
    """The profile's share (%) of each of `reasons`, then of every other reason."""
    by = {row.reason: row.share_pct for row in profile.by_reason}
    return [by.get(r, 0.0) for r in reasons] + [sum(v for k, v in by.items()
                                                   if k not in reasons)]


def exits_figure(profiles: list[Profile], title: str, width: str) -> Figure:
    """One benchmark's profiles, a stacked bar each (their environments as rows)."""
    reasons = top_reasons(profiles)
    fig = new_figure(width, len(profiles) + 1)
    ax = fig.add_subplot()
    left = [0.0] * len(profiles)
    for i, name in enumerate([*reasons, "other"]):
        widths = [shares(p, reasons)[i] for p in profiles]
        if not any(widths):
            continue
        ax.barh(range(len(profiles)), widths, left=left, height=0.6, label=name,
                color=OKABE_ITO[i] if name != "other" else OTHER_COLOUR, lw=0)
        left = [a + b for a, b in zip(left, widths)]
    for y, p in enumerate(profiles):
        count = sum(row.count for row in p.by_reason)
        ax.text(101, y, f"{count:,}", va="center", fontsize=6)
    rows_axis(ax, [f"{p.environment} ({p.source})" if p.source else p.environment
                   for p in profiles])
    ax.set_xlim(0, 115)
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.set_xlabel("share of exits (%); count at the right")
    ax.set_title(title)
    legend_below(fig, [*reasons, "other"], width)
    return fig


def exits_figures(report: RunReport, width: str) -> list[PaperFigure]:
    """A figure per benchmark whose profiles counted exits (failed or empty ones left out)."""
    per: dict[str, list[Profile]] = {}
    for p in report.profiles:
        if p.status == "ok" and p.by_reason:
            per.setdefault(p.benchmark, []).append(p)
    return [PaperFigure(f"exits-{bench}", exits_figure(profiles, f"{bench}: exits by reason",
                                                       width))
            for bench, profiles in per.items()]


def price_figure(price: PriceList, palette: dict, width: str) -> Figure | None:
    """The primitives against the baseline, a point per environment; None when no
    primitive has a ratio."""
    rows = [r for r in price.rows if any(c.ratio for c in r.cells)]
    if not rows:
        return None
    fig = new_figure(width, len(rows))
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.axvline(1.0, color="#000000", lw=0.6)
    shown: set[str] = set()
    for y, row in enumerate(rows):
        for cell in row.cells:
            if not cell.ratio or cell.ratio <= 0:
                continue
            ax.plot([cell.ratio], [y], ls="none", marker="o", ms=3.5,
                    color=palette.get(cell.environment, OKABE_ITO[7]),
                    label=None if cell.environment in shown else cell.environment)
            shown.add(cell.environment)
    ratios = [c.ratio for r in rows for c in r.cells if c.ratio and c.ratio > 0]
    log_ticks(ax, min([*ratios, 1.0]) / 1.2, max([*ratios, 1.0]) * 1.2)
    rows_axis(ax, [row.metric for row in rows])
    ax.set_xlabel(f"time per operation, ratio to {price.baseline or 'the baseline'}")
    ax.set_title(f"price list: {price.benchmark}")
    legend_below(fig, sorted(shown), width)
    return fig


def price_figures(report: RunReport, width: str) -> list[PaperFigure]:
    palette = colours(report)
    made = [(p.benchmark, price_figure(p, palette, width)) for p in report.price_lists]
    return [PaperFigure(f"price-{bench}", fig) for bench, fig in made if fig is not None]
