"""The HTML report: one self-contained file (plotly.js inline, nothing fetched when opened).

Per benchmark, one bar chart per metric (environments as bars, 95 % CI as error bars, the
baseline drawn apart, the source's published ratio as a marker where the study has one),
then the overhead table with its verdicts; before that the run and the environments' finger-
prints side by side; after it the warnings. html_compare.py draws an A/B comparison.
"""
from __future__ import annotations

import json
from html import escape
from itertools import groupby

from . import aggregates, failures, fmt, matrix

BASELINE_COLOR = "#6b7280"
PASS_COLOR = "#2563eb"
FAIL_COLOR = "#dc2626"
NEUTRAL_COLOR = "#2563eb"
PUBLISHED_COLOR = "#f59e0b"
UNDECIDED_COLOR = "#d97706"

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #111827;
       margin: 0 auto; max-width: 1240px; padding: 16px 24px 48px; }
h1 { font-size: 22px; margin: 8px 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px;
     border-bottom: 1px solid #e5e7eb; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 16px 0 6px; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 13px; }
th, td { border: 1px solid #e5e7eb; padding: 3px 8px; vertical-align: top; }
th { background: #f9fafb; text-align: left; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
span.key { font-weight: 600; white-space: nowrap; }
.pass { color: #15803d; font-weight: 600; } .fail { color: #b91c1c; font-weight: 600; }
.better { color: #15803d; font-weight: 600; } .worse { color: #b91c1c; font-weight: 600; }
.inconclusive { color: #b45309; font-weight: 600; } .same { color: #374151; }
table.matrix td.num { font-weight: 600; }
.warn { background: #fef3c7; border: 1px solid #f59e0b; padding: 6px 10px; border-radius: 4px; }
.quick { background: #fef3c7; border: 1px solid #f59e0b; padding: 6px 10px; border-radius: 4px; }
.muted { color: #6b7280; } .mono { font-family: ui-monospace, monospace; font-size: 12px; }
.charts { display: flex; flex-wrap: wrap; gap: 8px; }
.chart { flex: 1 1 380px; min-width: 340px; max-width: 600px; border: 1px solid #e5e7eb;
         border-radius: 4px; }
.envs td { max-width: 340px; overflow-wrap: anywhere; }
.long { max-height: 4.5em; overflow: auto; }
details { margin: 4px 0 12px; } summary { cursor: pointer; color: #374151; }
ul.warnings li { margin: 2px 0; }
"""


def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs
    return get_plotlyjs()


def _page(title: str, body: list[str], charts: list[tuple[str, dict]]) -> str:
    """The whole document: plotly.js once, inline; every chart drawn from its JSON spec."""
    specs = json.dumps([{"id": cid, "fig": fig} for cid, fig in charts], separators=(",", ":"))
    specs = specs.replace("</", "<\\/")      # never close the script element early
    draw = ("(function(){var specs=" + specs + ";"
            "specs.forEach(function(s){var el=document.getElementById(s.id);"
            "Plotly.newPlot(el,s.fig.data,s.fig.layout,{displayModeBar:false,responsive:true});"
            "});})();")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>", f"<style>{CSS}</style>",
        f'<script type="text/javascript">{_plotly_js()}</script>',
        "</head>", "<body>", *body,
        f'<script type="text/javascript">{draw}</script>', "</body>", "</html>", ""])


def _table(header: list[str], rows: list[list[str]], num_from: int = 99, cls: str = "") -> str:
    """Cells are HTML already (escaped by the caller); columns from `num_from` are numbers."""
    out = [f'<table class="{cls}">' if cls else "<table>"]
    if any(header):
        out += ["<thead><tr>", *(f"<th>{h}</th>" for h in header), "</tr></thead>"]
    out.append("<tbody>")
    for row in rows:
        out.append("<tr>" + "".join(
            f'<td class="num">{c}</td>' if i >= num_from else f"<td>{c}</td>"
            for i, c in enumerate(row)) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _e(x) -> str:
    return escape("" if x is None else str(x))


def _verdict_html(result: dict, baseline: str | None) -> str:
    text = fmt.verdict_cell(result, baseline)
    vs = result["vs_baseline"]
    cls = vs["verdict"] if vs else "muted"
    title = f' title="{_e(vs["message"])}"' if vs and vs.get("message") else ""
    return f'<span class="{cls}"{title}>{escape(text)}</span>'


def _matrix(analysis: dict) -> str:
    m = matrix.build(analysis)
    if not m.rows:
        return ""
    rows = [[_e(name), *(f'<span class="{c.verdict or "muted"}">{_e(c.text)}</span>'
                         for c in cells)] for name, cells in m.rows]
    return ("<h2>Verdicts</h2>" + _table(["metric", *(_e(c) for c in m.columns)], rows,
                                          num_from=1, cls="matrix")
            + f"<p class='muted'>{_e(matrix.LEGEND)}</p>")


def _method_notes(analysis: dict) -> list[str]:
    lines = fmt.method_note_lines(analysis)
    if not lines:
        return []
    return (["<h2>Method notes</h2><ul>"] + [f"<li>{_e(line)}</li>" for line in lines]
            + ["</ul>"])


# -- environments side by side ---------------------------------------------------------------
# The fingerprint's headline, in this order; everything else goes under "all details".
HEADLINE_KEYS = ("cpu_model", "cores", "logical_cpus", "cpus", "mem", "memory", "kernel", "os",
                 "accel", "accel_reason", "platform", "virtualization", "hypervisor_flag",
                 "qemu_version", "machine", "dmi", "disk", "disk_model", "guest_disk_drivers",
                 "nic", "nic_model", "guest_nic_drivers", "cache", "backing", "clocksource")


def _md_value(v) -> str:
    if v is None:
        return '<span class="muted">—</span>'
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return _e(fmt.value(v))
    if isinstance(v, list) and all(isinstance(x, (str, int, float)) for x in v):
        text = ", ".join(str(x) for x in v)
    elif isinstance(v, (dict, list)):
        text = json.dumps(v, ensure_ascii=False, default=str)
    else:
        text = str(v)
    if len(text) > 80:
        return f'<div class="long mono">{escape(text)}</div>'
    return f'<span class="mono">{escape(text)}</span>' if isinstance(v, (list, dict)) else escape(text)


def _env_rows(envs: list[dict], keys, source) -> list[list[str]]:
    return [[f'<span class="key">{_e(label)}</span>', *(_md_value(source(e).get(k)) for e in envs)]
            for k, label in keys]


def _environments(analysis: dict) -> str:
    envs = analysis["environments"]
    if not envs:
        return "<p class='muted'>no environments</p>"
    baseline = analysis["run"]["baseline"]
    header = ["", *(_e(e["label"]) + (" <span class='muted'>(baseline)</span>"
                                      if e["label"] == baseline else "") for e in envs)]
    top = [[f'<span class="key">{k}</span>', *cells] for k, cells in (
        ("kind", [_e(e["kind"]) for e in envs]),
        ("spec", [f'<span class="mono">{_e(e.get("spec"))}</span>' for e in envs]),
        ("status", [_e(e["status"]) + (f"<br><span class='fail'>{_e(e['error'])}</span>"
                                       if e.get("error") else "") for e in envs]),
        ("ready in", ["—" if e.get("boot_s") is None else f"{e['boot_s']:.1f} s" for e in envs]))]
    md = [e["metadata"] or {} for e in envs]
    present = {k for m in md for k in m if m.get(k) not in (None, "", [], {})}
    head = [(k, k) for k in HEADLINE_KEYS if k in present]
    rows = top + _env_rows(envs, head, lambda e: e["metadata"] or {})
    opts = sorted({k for e in envs for k in (e.get("options") or {})})
    rest = sorted({k for m in md for k in m} - {k for k, _ in head})
    details = (_env_rows(envs, [(k, f"option {k}") for k in opts], lambda e: e.get("options") or {})
               + _env_rows(envs, [(k, k) for k in rest], lambda e: e["metadata"] or {}))
    out = _table(header, rows, cls="envs")
    if details:
        out += ("<details><summary>every option and fingerprint field "
                f"({len(details)})</summary>" + _table(header, details, cls="envs") + "</details>")
    return out


# -- charts ---------------------------------------------------------------------------------
def _wrap_label(label: str, width: int = 18) -> str:
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


def _bar_figure(metric_rows: list[dict], baseline: str | None, title: str) -> dict:
    x = [r["environment"] for r in metric_rows]
    y = [r["trimmed_mean"] for r in metric_rows]
    up = [max(0.0, (r["ci_high"] - r["trimmed_mean"])) if r["ci_high"] is not None else 0.0
          for r in metric_rows]
    down = [max(0.0, (r["trimmed_mean"] - r["ci_low"])) if r["ci_low"] is not None else 0.0
            for r in metric_rows]
    colors, texts, hover = [], [], []
    for r in metric_rows:
        vs = r["vs_baseline"]
        if r["environment"] == baseline:
            colors.append(BASELINE_COLOR)
            texts.append("baseline")
        elif vs:
            colors.append({"pass": PASS_COLOR, "fail": FAIL_COLOR}.get(vs["verdict"], UNDECIDED_COLOR))
            texts.append(f"{vs['overhead_pct']:+.1f} %")
        else:
            colors.append(NEUTRAL_COLOR)
            texts.append("")
        hover.append(f"{r['environment']}<br>trimmed mean {fmt.value(r['trimmed_mean'])} {r['unit']}"
                     f"<br>95 % CI {fmt.ci(r['ci_low'], r['ci_high'])}<br>n = {r['n']}")
    data = [{"type": "bar", "x": x, "y": y, "name": "measured (trimmed mean)",
             "marker": {"color": colors}, "text": texts, "textposition": "auto",
             "insidetextanchor": "middle", "cliponaxis": False, "hovertext": hover, "hoverinfo": "text",
             "error_y": {"type": "data", "symmetric": False, "array": up, "arrayminus": down,
                         "color": "#111827", "thickness": 1.5, "width": 6}}]
    # the source's figure: its ratio times the measured reference, so bars and markers share
    # the metric's own scale
    base = {r["environment"]: r["trimmed_mean"] for r in metric_rows}
    px, py, ph = [], [], []
    for r in metric_rows:
        pub = r.get("published")
        if not pub or pub.get("ratio") is None:
            continue
        ref = pub.get("versus") or baseline
        if ref not in base:
            continue
        px.append(r["environment"])
        py.append(pub["ratio"] * base[ref])
        ph.append(f"published ratio {pub['ratio']:.3f} vs {ref} ({pub['source']})")
    if px:
        data.append({"type": "scatter", "mode": "markers", "x": px, "y": py,
                     "name": "published ratio × measured reference",
                     "marker": {"symbol": "diamond", "size": 11, "color": PUBLISHED_COLOR,
                                "line": {"color": "#111827", "width": 1}},
                     "hovertext": ph, "hoverinfo": "text"})
    layout = {"title": {"text": title, "font": {"size": 13}, "x": 0.02, "xanchor": "left"},
              "height": 340, "margin": {"l": 60, "r": 16, "t": 64 if px else 44, "b": 20},
              "yaxis": {"title": {"text": metric_rows[0]["unit"]}, "rangemode": "tozero",
                        "automargin": True},
              # long labels (qemu-tcg/virtio-blk/virtio-net/...) break at each "/"
              "xaxis": {"type": "category", "automargin": True, "tickangle": 0,
                        "tickvals": x, "ticktext": [_wrap_label(v) for v in x]},
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


def _overhead_table(rows: list[dict], baseline: str | None, pub: bool) -> str:
    header = ["environment", "metric", "n", failures.COLUMN, "trimmed mean", "95 % CI", "CV",
              "ratio", "overhead", "overhead CI", "p", "verdict"]
    if pub:
        header += ["measured ratio", "published", "source"]
    out = []
    for r in rows:
        vs = r["vs_baseline"]
        failed = (f"<span class='fail'>{_e(failures.cell(r))}</span>" if r["failed_trials"]
                  else _e(failures.cell(r)))
        row = [_e(r["environment"]),
               _e(f"{r['metric']} {fmt.direction(r['higher_is_better'])} ({r['unit']})"),
               _e(r["n"]), failed,
               _e(fmt.value(r["trimmed_mean"])), _e(fmt.ci(r["ci_low"], r["ci_high"])),
               _e(fmt.pct(r["cv"] * 100, signed=False)) if r["cv"] is not None else "n/a",
               _e(fmt.ratio(vs["ratio"])) if vs else "—",
               _e(fmt.pct(vs["overhead_pct"])) if vs else "—",
               _e(fmt.ci_pct(vs["ci_low"], vs["ci_high"])) if vs else "—",
               _e(fmt.p(vs["p_value"])) if vs else "—",
               _verdict_html(r, baseline)]
        if pub:
            row += [_e(c) for c in fmt.published_cells(r, baseline)]
        out.append(row)
    return _table(header, out, num_from=2)


def failure_blocks(analysis: dict) -> list[str]:
    """Trials failed / planned per environment x benchmark, and each failed trial's evidence
    (with the end of its output), when any trial failed."""
    counts = analysis.get("trial_counts") or []
    if not any(c["failed"] for c in counts):
        return []
    out = [f"<h2>{_e(failures.title(failures.COUNTS_TITLE))}</h2>",
           _table(["environment", "benchmark", "failed", "planned", "measured"],
                  [[_e(c["environment"]), _e(c["benchmark"]),
                    f"<span class='fail'>{c['failed']}</span>" if c["failed"] else "0",
                    _e(c["planned"] if c["planned"] is not None else "?"), _e(c["ok"])]
                   for c in counts], num_from=2),
           f"<h2>{_e(failures.title(failures.EVIDENCE_TITLE))}</h2>", '<ul class="evidence">']
    for e, line in zip(analysis.get("failed_trial_evidence") or [],
                       failures.evidence_lines(analysis)):
        tail = "\n".join(x for x in (e["stdout_tail"].rstrip()[-600:],
                                     e["stderr_tail"].rstrip()[-600:]) if x)
        out.append(f"<li>{_e(line)}" + (f"<pre>{_e(tail)}</pre>" if tail else "") + "</li>")
    out.append("</ul>")
    return out


def render(analysis: dict) -> str:
    run = analysis["run"]
    baseline = run["baseline"]
    pub = fmt.has_published(analysis)
    body = [f"<h1>virtbench run {_e(run['id'])} · {_e(run['study'])}</h1>"]
    if run["quick"]:
        body.append('<p class="quick">QUICK sizes: a smoke run, not comparable to full-size '
                    "figures.</p>")
    summary = [["study", _e(run["study"])], ["status", _e(run["status"])],
               ["started", _e(run["started"])], ["finished", _e(run["finished"])],
               ["baseline", _e(baseline or "(none)")],
               ["verdict threshold", _e(f"{run['threshold_pct']:g} %")],
               ["alpha", _e(f"{run.get('alpha', 0.05):g}")],
               ["trials planned", _e(run["trials_planned"])], ["seed", _e(run["seed"])],
               ["host", _e(run.get("host"))], ["virtbench", _e(run.get("virtbench_version"))],
               ["results", _e(f"{len(analysis['results'])} (environment × benchmark × metric)")],
               ["warnings", _e(len(analysis["warnings"]))]]
    body.append(_matrix(analysis))
    body += _method_notes(analysis)
    body += ["<h2>Run</h2>", _table(["", ""], [[f'<span class="key">{k}</span>', v]
                                              for k, v in summary])]
    body += ["<h2>Environments</h2>", _environments(analysis)]
    charts: list[tuple[str, dict]] = []
    for bench, rows in groupby(analysis["results"], key=lambda r: r["benchmark"]):
        rows = list(rows)
        body.append(f"<h2>{_e(bench)}</h2>")
        body.append('<div class="charts">')
        for metric, mrows in groupby(rows, key=lambda r: r["metric"]):
            mrows = list(mrows)
            cid = f"chart-{len(charts)}"
            title = (f"{metric} ({mrows[0]['unit']}) · "
                     f"{'higher' if mrows[0]['higher_is_better'] else 'lower'} is better")
            charts.append((cid, _bar_figure(mrows, baseline, title)))
            body.append(f'<div class="chart" id="{cid}" data-metric="{_e(metric)}"></div>')
        body.append("</div>")
        body.append(_overhead_table(rows, baseline, pub))
        from .html_profiles import blocks      # it imports this module's helpers
        body += blocks(analysis, bench, charts)
    undecided = [r for r in analysis["results"]
                 if r["vs_baseline"] and r["vs_baseline"]["verdict"] == "inconclusive"]
    if undecided:
        body.append("<h2>Inconclusive verdicts</h2><ul>")
        body += [f"<li>{_e(r['environment'])} · {_e(r['benchmark'])} · {_e(r['metric'])}: "
                 f"{_e(r['vs_baseline']['message'])}</li>" for r in undecided]
        body.append("</ul>")
    if analysis.get("published_only"):
        body.append("<h2>Published figures not measured in this run</h2><ul>")
        body += [f"<li>{_e(line)}</li>" for line in fmt.published_only_lines(analysis)]
        body.append("</ul>")
    agg = aggregates.aggregate_lines(analysis)
    if agg:
        body.append(f"<h2>{_e(failures.title(aggregates.AGGREGATES_TITLE))}</h2><ul>")
        body += [f"<li>{_e(line)}</li>" for line in agg]
        body.append("</ul>")
    body += failure_blocks(analysis)
    body.append("<h2>Warnings</h2>")
    if analysis["warnings"]:
        body.append('<ul class="warnings">')
        for w in analysis["warnings"]:
            where = " · ".join(x for x in (w["environment"], w["benchmark"], w["metric"]) if x)
            body.append(f"<li><b>{_e(w['kind'])}</b> {_e(where)}: {_e(w['message'])}</li>")
        body.append("</ul>")
    else:
        body.append("<p class='muted'>none</p>")
    body.append(
        "<p class='muted'>Bars: trimmed mean (the seed method: drop the highest and the lowest "
        "sample, mean of the rest); error bars: 95 % bootstrap CI; grey bar and dotted line: the "
        f"baseline; blue: within {run['threshold_pct']:g} % of it, red: not, amber: "
        "inconclusive. Overhead: positive = worse than the baseline, whatever the metric's "
        "direction; p: two-sided permutation test of the trimmed means; verdicts at alpha "
        f"{run.get('alpha', 0.05):g}."
        + (" Diamonds: the source's published ratio applied to the measured reference."
           if pub else "") + "</p>")
    return _page(f"virtbench {run['id']}", body, charts)
