"""A study's own figures ([[figure]]; docs/studies.md), drawn by `virtbench figures` beside
the default ones: the paper's figures with the published values beside the measured ones
(the published bar hatched and hollow, the measured one filled, in the environment's colour).

bars    each environment against the reference, per benchmark · metric: this run's ratio of
        trimmed means (the paper's method; against the paper's reference when its figure
        names one, e.g. IDE) and the paper's ratio, a line at 1, the ±threshold band shaded
        (RIKEN's Table 15 as bars)
values  per benchmark · metric, each environment's trimmed mean and the paper's value (the
        VirtualBox AHCI and IDE bar charts); one panel per metric
spread  per benchmark · metric of a multi-instance run: each instance's (guest's) trimmed
        mean as a point over a box, the spread (max/min - 1) and the paper's beside it
        (CNAF's PI test over its guests)
and a [[table]] of kind verdicts drawn as a table (the ○/× matrix of fmt/declared.py), so that
`virtbench figures` writes RIKEN's Table 15 as well as its bars.

Pure: report in, PaperFigure out (all_figures: paper.py's, then these); the rows are fmt/declared.py's."""
from __future__ import annotations

import math
import textwrap

import matplotlib
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ....core.metric_id import INSTANCE, SPREAD
from ....foundations.model import DeclaredView, Result, RunReport
from ....foundations.stats.band import band as ratio_band
from ..fmt.declared import (env_name, pairs, published_only, reference_values, selected,
                            verdicts_table)
from .style import (BAND_COLOR, MIN_HEIGHT_IN, OKABE_ITO, PAPER_RC, PaperFigure, check_width,
                    colours, sized_figure)

BAR = 0.38                    # a bar's height, in rows
HATCH = "////"
PANEL_IN = 0.9                # height of a values panel, before its bars


def _paper_name(report: RunReport) -> str:
    return report.run.study or "the paper"


def _legend(ax, palette: dict, envs: list[str], report: RunReport, published: bool,
            band: bool = False) -> None:
    handles = [Patch(facecolor="#777777", label="measured here")]
    if published:
        handles.append(Patch(facecolor="white", edgecolor="#777777", hatch=HATCH,
                             label=f"published ({_paper_name(report)})"))
    if band:
        handles.append(Patch(facecolor=BAND_COLOR, alpha=0.35,
                             label=f"±{report.run.threshold_pct:g} % band"))
    handles += [Patch(facecolor=palette.get(e, OKABE_ITO[7]), label=e) for e in envs]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.18),
              frameon=False, ncols=1, fontsize=6)


def _bar(ax, y: float, x: float | None, colour: str, published: bool) -> None:
    """One bar at row y, its value written at its end (a bar too short to see still says)."""
    if x is None:
        return
    ax.text(x, y, f" {x:.3g}", va="center", ha="left", fontsize=5, color="#333333")
    if published:
        ax.barh(y, x, height=BAR, facecolor="white", edgecolor=colour, hatch=HATCH, lw=0.8)
    else:
        ax.barh(y, x, height=BAR, color=colour, lw=0)


def _ratio_rows(report: RunReport, view: DeclaredView):
    """(benchmark · metric, environment, measured ratio, published ratio) per bar pair."""
    results, pubs = selected(report, view), published_only(report, view)
    out = []
    for bench, metric in pairs(results, pubs, view):
        for r in results:
            if (r.benchmark, r.metric) != (bench, metric) or r.environment == report.run.baseline:
                continue
            rule = r.vs_baseline.published_rule if r.vs_baseline else None
            measured = rule.ratio if rule else None
            if r.published and r.published.measured_ratio:    # against the paper's reference
                measured = r.published.measured_ratio
            paper = r.published.ratio if r.published and view.published else None
            if measured or paper:
                out.append((f"{bench} · {metric}", r.environment, measured, paper))
        if view.published:
            out += [(f"{bench} · {metric}", env_name(report, p.environment), None, p.ratio)
                    for p in pubs if (p.benchmark, p.metric) == (bench, metric) and p.ratio]
    return out


def bars_figure(report: RunReport, view: DeclaredView, width: str) -> Figure | None:
    """Measured and published ratios to the reference, two bars per environment."""
    rows = _ratio_rows(report, view)
    if not rows:
        return None
    palette = colours(report)
    groups = list(dict.fromkeys(g for g, *_ in rows))
    envs = list(dict.fromkeys(e for _, e, *_ in rows))
    for e in envs:
        palette.setdefault(e, OKABE_ITO[(len(palette)) % len(OKABE_ITO)])
    step = 2 * BAR * len(envs) + 0.5
    fig = sized_figure(width, max(MIN_HEIGHT_IN, 0.32 * step * len(groups) + 1.2
                                  + 0.12 * len(envs)))
    ax = fig.add_subplot()
    lo, hi = (math.exp(x) for x in ratio_band(float(report.run.threshold_pct)))
    ax.axvspan(lo, hi, color=BAND_COLOR, alpha=0.35, lw=0)
    ax.axvline(1.0, color="#000000", lw=0.6)
    for group, env, measured, paper in rows:
        y = groups.index(group) * step + envs.index(env) * 2 * BAR
        _bar(ax, y, measured, palette[env], False)
        _bar(ax, y + BAR, paper, palette[env], True)
    ax.set_yticks([i * step + (len(envs) * 2 * BAR - BAR) / 2 for i in range(len(groups))],
                  groups)
    ax.set_ylim(len(groups) * step - 0.5, -0.5)
    ax.set_xlabel(f"ratio to {report.run.baseline or 'the reference'} (trimmed means)")
    ax.set_title(view.title or view.name)
    _legend(ax, palette, envs, report, view.published, band=True)
    return fig


def _value_panel(ax, report: RunReport, rows: list[Result], pubs, view, palette) -> list[str]:
    refs = reference_values(report, rows, pubs)
    bars = []
    for r in rows:
        paper = r.published.value if r.published and r.published.value else None
        paper = paper if paper is not None else refs.get(r.environment)
        bars.append((r.environment, r.trimmed_mean if r.n or r.samples else None, paper))
    bars += [(env_name(report, p.environment), None,
              p.value if p.value is not None else refs.get(env_name(report, p.environment)))
             for p in pubs]
    for i, (env, measured, paper) in enumerate(bars):
        palette.setdefault(env, OKABE_ITO[len(palette) % len(OKABE_ITO)])
        _bar(ax, 2 * BAR * i, measured, palette[env], False)
        _bar(ax, 2 * BAR * i + BAR, paper if view.published else None, palette[env], True)
    ax.set_yticks([])
    ax.set_ylim(2 * BAR * len(bars) - 0.2, -0.4)
    return [env for env, *_ in bars]


def values_figure(report: RunReport, view: DeclaredView, width: str) -> Figure | None:
    """Each environment's trimmed mean and the paper's value, a panel per metric."""
    results, pubs = selected(report, view), published_only(report, view)
    groups = pairs(results, pubs, view)
    if not groups:
        return None
    palette = colours(report)
    fig = sized_figure(width, PANEL_IN * len(groups) + 1.4)
    axes = fig.subplots(len(groups), 1, squeeze=False)[:, 0]
    envs: list[str] = []
    for ax, (bench, metric) in zip(axes, groups):
        mine = [r for r in results if (r.benchmark, r.metric) == (bench, metric)]
        theirs = [p for p in pubs if (p.benchmark, p.metric) == (bench, metric)]
        envs += _value_panel(ax, report, mine, theirs, view, palette)
        unit = next((r.unit for r in mine if r.unit), "")
        ax.set_title(f"{bench} · {metric}" + (f" ({unit})" if unit else ""), fontsize=7)
    fig.suptitle(view.title or view.name, fontsize=8)
    _legend(axes[-1], palette, list(dict.fromkeys(envs)), report, view.published)
    return fig


def _instances(report: RunReport, view: DeclaredView):
    """{(benchmark, base metric): {environment: [each instance's trimmed mean]}}."""
    out: dict[tuple[str, str], dict[str, list[float]]] = {}
    for r in report.results:
        mid = r.metric_id
        if (mid.scope == INSTANCE and r.benchmark in view.benchmarks
                and (not view.metrics or mid.base in view.metrics) and (r.n or r.samples)):
            out.setdefault((r.benchmark, mid.base), {}).setdefault(r.environment, []).append(
                r.trimmed_mean)
    return out


def _spread_text(report: RunReport, bench: str, base: str, env: str, published: bool) -> str:
    for r in report.results:
        if (r.benchmark, r.environment, r.metric_id.scope, r.metric_id.base) == \
                (bench, env, SPREAD, base):
            text = f"\nspread {r.trimmed_mean:.1f} %"
            if published and r.published and r.published.value is not None:
                text += f", published {r.published.value:g} %"
            return text
    return ""


def spread_figure(report: RunReport, view: DeclaredView, width: str) -> Figure | None:
    """Each guest's value of a multi-instance environment, a box over the guests."""
    groups = _instances(report, view)
    if not groups:
        return None
    palette = colours(report)
    fig = sized_figure(width, 2.2 * len(groups))
    axes = fig.subplots(len(groups), 1, squeeze=False)[:, 0]
    for ax, ((bench, base), per_env) in zip(axes, groups.items()):
        envs = list(per_env)
        ax.boxplot([per_env[e] for e in envs], positions=range(len(envs)), widths=0.5,
                   showfliers=False, medianprops={"color": "#000000", "lw": 0.8})
        for x, env in enumerate(envs):
            values = per_env[env]
            ax.plot([x] * len(values), values, ls="none", marker="o", ms=3,
                    color=palette.get(env, OKABE_ITO[7]))
        ax.set_xticks(range(len(envs)), [f"{e}\n({len(per_env[e])} guests)"
                                         + _spread_text(report, bench, base, e, view.published)
                                         for e in envs], fontsize=6)
        ax.set_ylabel(base)
        ax.set_title(f"{bench} · {base}: each guest's trimmed mean", fontsize=7)
    fig.suptitle(view.title or view.name, fontsize=8)
    return fig


def matrix_figure(report: RunReport, view: DeclaredView, width: str) -> Figure | None:
    """A [[table]] of kind verdicts drawn as a table (the paper's ○/× matrix, paper beside
    this run), so that `virtbench figures` writes it too: the environments as E1, E2, ...
    in the header, named below it with the table's note."""
    t = verdicts_table(report, view)
    if not t.rows:
        return None
    envs = list(dict.fromkeys(h.rsplit(" ", 1)[0] for h in t.header[1:]))
    head = [t.header[0], *(f"E{envs.index(h.rsplit(' ', 1)[0]) + 1}\n{h.rsplit(' ', 1)[1]}"
                           for h in t.header[1:])]
    words = [f"E{i}: {e}" for i, e in enumerate(envs, 1)] + [t.note]
    lines = [line for w in words for line in textwrap.wrap(w, 90)]
    fig = sized_figure(width, 0.5 + 0.2 * (len(t.rows) + 2) + 0.09 * len(lines))
    top, bottom = fig.subplots(2, 1, height_ratios=[len(t.rows) + 2, 0.45 * len(lines)])
    for ax in (top, bottom):
        ax.axis("off")
    table = top.table(cellText=t.rows, colLabels=head, loc="center", cellLoc="center",
                      edges="horizontal")
    table.auto_set_font_size(False)
    table.set_fontsize(6)
    for (row, _), cell in table.get_celld().items():
        if row == 0:
            cell.set_height(cell.get_height() * 1.8)
    table.auto_set_column_width(list(range(len(head))))
    top.set_title(view.title or view.name)
    bottom.text(0.0, 1.0, "\n".join(lines), fontsize=5, va="top", ha="left",
                transform=bottom.transAxes)
    return fig


BUILDERS = {"bars": bars_figure, "values": values_figure, "spread": spread_figure}
TABLE_FIGURES = {"verdicts": matrix_figure}


def declared_figures(report: RunReport, width: str = "single") -> list[PaperFigure]:
    """Every [[figure]] the run's study declares that this run has something to draw for
    (the published figures alone are enough for bars and values)."""
    check_width(width)
    out = []
    with matplotlib.rc_context(PAPER_RC):
        for view in report.declared:
            make = (BUILDERS if view.what == "figure" else TABLE_FIGURES).get(view.kind)
            fig = make(report, view, width) if make else None
            if fig is not None:
                out.append(PaperFigure(f"study-{view.name}", fig))
    return out
