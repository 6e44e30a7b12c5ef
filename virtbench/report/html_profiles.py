"""Exit profiles in the HTML report: under each benchmark, beside the overheads they explain,
one block per environment (the overhead, exits by reason, the top guest functions as a chart
and a table); and the page `virtbench report --profile --format html` gives alone."""
from __future__ import annotations

from . import profiles
from .html import _e, _page, _table


def _function_figure(entry: dict, title: str) -> dict:
    rows = entry["by_function"][:profiles.TOP][::-1]          # largest on top
    names = [f"{r['function'] or r['address']}" + (f" ← {r['caller']}" if r["caller"] else "")
             for r in rows]
    return {"data": [{"type": "bar", "orientation": "h", "x": [r["share_pct"] for r in rows],
                      "y": names, "marker": {"color": "#4c78a8"},
                      "hovertext": [f"{r['count']} at {r['address']}"
                                    + (f" ({r['device']})" if r.get("device") else "")
                                    for r in rows]}],
            "layout": {"title": {"text": title, "font": {"size": 13}},
                       "xaxis": {"title": {"text": "share of exits (%)"}},
                       "margin": {"l": 260, "r": 20, "t": 40, "b": 40},
                       "height": 60 + 24 * max(len(rows), 1)}}


def blocks(analysis: dict, benchmark: str | None, charts: list[tuple[str, dict]]) -> list[str]:
    """The profile blocks of one benchmark (every benchmark when None); charts are appended."""
    entries = [e for e in analysis.get("profiles") or []
               if benchmark is None or e["benchmark"] == benchmark]
    parts = {p["title"]: p for p in profiles.sections({"profiles": entries})}
    out = []
    for entry in entries:
        part = parts[f"{entry['environment']} · {entry['benchmark']}"]
        out.append('<div class="profile">')
        out.append(f"<h3>Exit profile · {_e(part['title'])}</h3>")
        out.append(f"<p>{_e(part['subtitle'])}. <b>{_e(part['explains'])}</b>.</p>")
        if part["functions"]:
            cid = f"chart-{len(charts)}"
            charts.append((cid, _function_figure(entry, f"top guest functions · "
                                                        f"{entry['environment']}")))
            out.append(f'<div class="chart" id="{cid}"></div>')
        if part["reasons"]:
            out.append(_table([_e(h) for h in profiles.REASON_HEADER],
                              [[_e(c) for c in row] for row in part["reasons"]], num_from=1))
        if part["functions"]:
            out.append(_table([_e(h) for h in profiles.FUNCTION_HEADER],
                              [[_e(c) for c in row] for row in part["functions"]], num_from=4))
        out += [f"<p class='muted'>note: {_e(n)}</p>" for n in part["notes"]]
        out.append("</div>")
    return out


def render_profiles(analysis: dict) -> str:
    run = analysis["run"]
    charts: list[tuple[str, dict]] = []
    body = [f"<h1>virtbench run {_e(run['id'])} · exit profiles</h1>"]
    body += blocks(analysis, None, charts) or [
        "<p>No exit profiles in this run; record them with "
        "<code>virtbench run ... --profile exits</code>.</p>"]
    return _page(f"virtbench {run['id']} · exit profiles", body, charts)
