"""The HTML form of `virtbench compare`: the change per metric as a bar chart with its CI,
the table with verdicts (inconclusive ones with the trials per side they need), the rows only
one run has and the metadata that differ between the runs."""
from __future__ import annotations

from . import fmt
from .html import BASELINE_COLOR, FAIL_COLOR, _e, _page, _table


def _compare_figure(rows: list[dict], title: str) -> dict:
    labels = [f"{r['environment']} · {r['benchmark']} · {r['metric']}" for r in rows]
    color = {"worse": FAIL_COLOR, "better": "#15803d"}
    data = [{"type": "bar", "orientation": "h", "y": labels, "x": [r["change_pct"] for r in rows],
             "marker": {"color": [color.get(r["verdict"], BASELINE_COLOR) for r in rows]},
             "error_x": {"type": "data", "symmetric": False,
                         "array": [max(0.0, r["ci_high"] - r["change_pct"])
                                   if r["ci_high"] is not None else 0 for r in rows],
                         "arrayminus": [max(0.0, r["change_pct"] - r["ci_low"])
                                        if r["ci_low"] is not None else 0 for r in rows],
                         "color": "#111827", "thickness": 1.5},
             "hovertext": [f"{lab}<br>change {fmt.pct(r['change_pct'])} "
                           f"CI {fmt.ci_pct(r['ci_low'], r['ci_high'])} p {fmt.p(r['p_value'])}"
                           for lab, r in zip(labels, rows)], "hoverinfo": "text"}]
    layout = {"title": {"text": title, "font": {"size": 13}, "x": 0.02, "xanchor": "left"},
              "height": 120 + 28 * len(rows), "margin": {"l": 20, "r": 20, "t": 44, "b": 40},
              "xaxis": {"title": {"text": "change B vs A, % (positive = B worse)"},
                        "zeroline": True, "zerolinecolor": "#111827"},
              "yaxis": {"automargin": True, "autorange": "reversed"},
              "showlegend": False, "font": {"family": "system-ui, sans-serif", "size": 11}}
    return {"data": data, "layout": layout}


def render_compare(comparison: dict) -> str:
    a, b = comparison["a"], comparison["b"]
    body = [f"<h1>virtbench compare {_e(a['id'])} → {_e(b['id'])}</h1>",
            _table(["", "A", "B"], [
                [f'<span class="key">{k}</span>', _e(a.get(k)), _e(b.get(k))]
                for k in ("id", "study", "started", "status", "quick", "baseline", "host")]),
            f"<p>A change counts when p &lt; {_e(comparison['alpha'])} and |change| &gt; "
            f"{comparison['min_change_pct']:g} % (positive = B worse than A, whatever the "
            "metric's direction); same = the test could have seen that change and did not; "
            "inconclusive = too few trials to tell.</p>"]
    body += [f'<p class="warn">{_e(w)}</p>' for w in comparison.get("warnings") or []]
    charts = []
    rows = comparison["rows"]
    if rows:
        charts.append(("chart-0", _compare_figure(rows, "change per metric, with 95 % CI")))
        body.append('<div class="charts"><div class="chart" id="chart-0" '
                    'style="max-width:none"></div></div>')
    trs = []
    for r in rows:
        trs.append([_e(r["environment"]), _e(r["benchmark"]),
                    _e(f"{r['metric']} {fmt.direction(r['higher_is_better'])} ({r['unit']})"),
                    _e(fmt.value(r["a"])), _e(fmt.value(r["b"])), _e(f"{r['n_a']} / {r['n_b']}"),
                    _e(fmt.pct(r["change_pct"])), _e(fmt.ci_pct(r["ci_low"], r["ci_high"])),
                    _e(fmt.p(r["p_value"])),
                    f'<span class="{_e(r["verdict"])}" title="{_e(r.get("message"))}">'
                    f'{_e(r["verdict"])}'
                    + (f" (≥ {_e(r['trials_needed'])} trials)"
                       if r["verdict"] == "inconclusive" and r.get("trials_needed") else "")
                    + "</span>"])
    body.append(_table(["environment", "benchmark", "metric", "A", "B", "n A / B", "change",
                        "95 % CI", "p", "verdict"], trs, num_from=3))
    for side, key in (("A", "only_in_a"), ("B", "only_in_b")):
        if comparison.get(key):
            body.append(f"<h2>Only in {side}</h2><ul>" + "".join(
                f"<li>{_e(' · '.join(k))}</li>" for k in comparison[key]) + "</ul>")
    if comparison.get("metadata_differences"):
        body.append("<h2>Metadata that differ (A → B)</h2><ul>" + "".join(
            f"<li>{_e(line)}</li>" for line in fmt.difference_lines(comparison)) + "</ul>")
    return _page(f"virtbench compare {a['id']} {b['id']}", body, charts)
