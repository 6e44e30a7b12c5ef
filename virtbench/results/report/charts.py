"""The HTML report's charts as plotly figure specs (plain dicts: data + layout; the page draws
them with plotly.js). Pure: reads the result model."""
from __future__ import annotations

from html import escape

from ...core.decisions import Decided
from ...foundations.model import Profile, Result
from ...foundations.model.run import MigrationTimeline
from . import profiles
from .fmt import numbers
from .words import change

BASELINE_COLOR = "#6b7280"
PASS_COLOR = "#2563eb"
FAIL_COLOR = "#dc2626"
NEUTRAL_COLOR = "#2563eb"
PUBLISHED_COLOR = "#f59e0b"
UNDECIDED_COLOR = "#d97706"
# a comparison's colour by its decision (undecided: UNDECIDED_COLOR)
VERDICT_COLOR = {Decided.PASS: PASS_COLOR, Decided.DIFFERS: PASS_COLOR,
                 Decided.FAIL: FAIL_COLOR}


def wrap_label(label: str, width: int = 18) -> str:
    """Break an environment label at its "/" so that several fit side by side."""
    lines, line = [], ""
    for part in label.split("/"):
        piece = part if not line else "/" + part
        if line and len(line) + len(piece) > width:
            lines.append(line)
            line = "/" + part
        else:
            line += piece
    lines.append(line)
    return "<br>".join(escape(x) for x in lines)


def bar_figure(metric_rows: list[Result], baseline: str | None, title: str) -> dict:
    """One metric: environments as bars (trimmed mean, 95 % CI as error bars, the baseline
    grey and drawn as a line), the source's published ratio as a marker where there is one."""
    x = [r.environment for r in metric_rows]
    y = [r.trimmed_mean for r in metric_rows]
    up = [max(0.0, (r.ci_high - r.trimmed_mean)) if r.ci_high is not None else 0.0
          for r in metric_rows]
    down = [max(0.0, (r.trimmed_mean - r.ci_low)) if r.ci_low is not None else 0.0
            for r in metric_rows]
    colors, texts, hover = [], [], []
    for r in metric_rows:
        vs = r.vs_baseline
        if r.environment == baseline:
            colors.append(BASELINE_COLOR)
            texts.append("baseline")
        elif vs:
            colors.append(VERDICT_COLOR.get(vs.verdict, UNDECIDED_COLOR))
            texts.append(change.cell(vs.ratio, r.higher_is_better, r.unit, vs.overhead_pct))
        else:
            colors.append(NEUTRAL_COLOR)
            texts.append("")
        hover.append(f"{r.environment}<br>trimmed mean {numbers.value(r.trimmed_mean)} {r.unit}"
                     f"<br>95 % CI {numbers.ci(r.ci_low, r.ci_high)}<br>n = {r.n}")
    data = [{"type": "bar", "x": x, "y": y, "name": "measured (trimmed mean)",
             "marker": {"color": colors}, "text": texts, "textposition": "auto",
             "insidetextanchor": "middle", "cliponaxis": False, "hovertext": hover, "hoverinfo": "text",
             "error_y": {"type": "data", "symmetric": False, "array": up, "arrayminus": down,
                         "color": "#111827", "thickness": 1.5, "width": 6}}]
    # the source's figure: its ratio times the measured reference, so bars and markers share
    # the metric's own scale
    base = {r.environment: r.trimmed_mean for r in metric_rows}
    px, py, ph = [], [], []
    for r in metric_rows:
        pub = r.published
        if not pub or pub.ratio is None:
            continue
        ref = pub.versus or baseline
        if ref not in base:
            continue
        px.append(r.environment)
        py.append(pub.ratio * base[ref])
        ph.append(f"published ratio {pub.ratio:.3f} vs {ref} ({pub.source})")
    if px:
        data.append({"type": "scatter", "mode": "markers", "x": px, "y": py,
                     "name": "published ratio × measured reference",
                     "marker": {"symbol": "diamond", "size": 11, "color": PUBLISHED_COLOR,
                                "line": {"color": "#111827", "width": 1}},
                     "hovertext": ph, "hoverinfo": "text"})
    layout = {"title": {"text": title, "font": {"size": 13}, "x": 0.02, "xanchor": "left"},
              "height": 340, "margin": {"l": 60, "r": 16, "t": 64 if px else 44, "b": 20},
              "yaxis": {"title": {"text": metric_rows[0].unit}, "rangemode": "tozero",
                        "automargin": True},
              # long labels (qemu-tcg/virtio-blk/virtio-net/...) break at each "/"
              "xaxis": {"type": "category", "automargin": True, "tickangle": 0,
                        "tickvals": x, "ticktext": [wrap_label(v) for v in x]},
              "showlegend": bool(px),
              "legend": {"orientation": "h", "x": 1, "xanchor": "right", "y": 1.0,
                         "yanchor": "bottom", "font": {"size": 10}},
              "bargap": 0.35, "plot_bgcolor": "#ffffff",
              "font": {"family": "system-ui, sans-serif", "size": 11}}
    if baseline in x and y[x.index(baseline)] is not None:
        layout["shapes"] = [{"type": "line", "xref": "paper", "x0": 0, "x1": 1,
                             "y0": y[x.index(baseline)], "y1": y[x.index(baseline)],
                             "line": {"color": BASELINE_COLOR, "width": 1, "dash": "dot"}}]
    return {"data": data, "layout": layout}


def function_figure(entry: Profile, title: str) -> dict:
    """An exit profile's top guest functions, largest on top."""
    rows = entry.by_function[:profiles.TOP][::-1]
    names = [f"{r.function or r.address}" + (f" ← {r.caller}" if r.caller else "")
             for r in rows]
    return {"data": [{"type": "bar", "orientation": "h", "x": [r.share_pct for r in rows],
                      "y": names, "marker": {"color": "#4c78a8"},
                      "hovertext": [f"{r.count} at {r.address}"
                                    + (f" ({r.device})" if r.device else "")
                                    for r in rows]}],
            "layout": {"title": {"text": title, "font": {"size": 13}},
                       "xaxis": {"title": {"text": "share of exits (%)"}},
                       "margin": {"l": 260, "r": 20, "t": 40, "b": 40},
                       "height": 60 + 24 * max(len(rows), 1)}}


def phase_figure(rows: list[Result], order: tuple[str, ...], title: str) -> dict | None:
    """A boot cut into phases: per environment one horizontal bar, its phases' trimmed means
    stacked in boot order (docs/lifecycle.md); None when the rows have no phase."""
    envs = list(dict.fromkeys(r.environment for r in rows))
    means = {(r.environment, r.metric_id.base or r.metric): r.trimmed_mean for r in rows
             if r.metric_id.scope in ("single", "aggregate")}
    phases = [p for p in order if any((e, p) in means for e in envs)]
    if not phases:
        return None
    data = [{"type": "bar", "orientation": "h", "name": p.removesuffix("_s"),
             "y": [wrap_label(e, 40) for e in envs], "x": [means.get((e, p), 0) for e in envs],
             "hovertemplate": f"{escape(p)}: %{{x:.3f}} s<extra></extra>"} for p in phases]
    layout = {"title": {"text": title, "font": {"size": 13}, "x": 0.02, "xanchor": "left"},
              "barmode": "stack", "height": 140 + 44 * len(envs),
              "margin": {"l": 20, "r": 20, "t": 44, "b": 40},
              "xaxis": {"title": {"text": "seconds (trimmed means), VMM start to agent"}},
              "yaxis": {"automargin": True, "autorange": "reversed"},
              "legend": {"orientation": "h"},
              "font": {"family": "system-ui, sans-serif", "size": 11}}
    return {"data": data, "layout": layout}


def migration_figure(m: MigrationTimeline, title: str) -> dict:
    """A live migration's timeline: the guest workload's pages written against seconds from
    the migration's start (as the host received its ticker's lines); the migration shaded
    (QEMU's total time); the largest gap the guest saw, its downtime, in red."""
    data = [{"type": "scatter", "mode": "lines", "name": "pages written",
             "x": [p[0] for p in m.points], "y": [p[1] for p in m.points],
             "line": {"color": PASS_COLOR, "width": 1.5}}]
    shapes, notes = [], []
    if m.total_s:
        shapes.append({"type": "rect", "yref": "paper", "y0": 0, "y1": 1, "x0": 0,
                       "x1": m.total_s, "fillcolor": BASELINE_COLOR, "opacity": 0.15,
                       "line": {"width": 0}})
        notes.append({"yref": "paper", "y": 1, "x": m.total_s / 2, "showarrow": False,
                      "yanchor": "bottom", "font": {"size": 10},
                      "text": f"migration: {m.total_s:.2f} s (QEMU's downtime "
                              f"{numbers.value(m.downtime_s)} s)"})
    if m.gap_at_s is not None and m.downtime_guest_s:
        shapes.append({"type": "rect", "yref": "paper", "y0": 0, "y1": 1,
                       "x0": m.gap_at_s - m.downtime_guest_s, "x1": m.gap_at_s,
                       "fillcolor": FAIL_COLOR, "opacity": 0.35, "line": {"width": 0}})
        notes.append({"yref": "paper", "y": 0.02, "x": m.gap_at_s, "showarrow": False,
                      "xanchor": "left", "font": {"size": 10, "color": FAIL_COLOR},
                      "text": f" guest-observed downtime {m.downtime_guest_s:.3f} s"})
    layout = {"title": {"text": title, "font": {"size": 13}, "x": 0.02, "xanchor": "left"},
              "height": 320, "margin": {"l": 60, "r": 20, "t": 56, "b": 44},
              "xaxis": {"title": {"text": "seconds from the migration's start (host clock)"}},
              "yaxis": {"title": {"text": "pages written by the guest"}},
              "shapes": shapes, "annotations": notes, "showlegend": False,
              "font": {"family": "system-ui, sans-serif", "size": 11}}
    return {"data": data, "layout": layout}
