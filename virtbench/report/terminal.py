"""The terminal report: rich tables, one per benchmark, in the spirit of hyperfine."""
from __future__ import annotations

from itertools import groupby

from rich.console import Console
from rich.table import Table

from . import fmt


def _tables(analysis: dict):
    results = analysis["results"]
    pub = fmt.has_published(analysis)
    for bench, rows in groupby(results, key=lambda r: r["benchmark"]):
        rows = list(rows)
        table = Table(title=f"{bench}", title_justify="left", show_lines=False)
        for col, just in (("environment", "left"), ("metric", "left"), ("n", "right"),
                          ("trimmed mean", "right"), ("median", "right"), ("CV", "right"),
                          ("95 % CI", "right"), ("vs baseline", "right"), ("overhead CI", "right"),
                          ("p", "right"), ("verdict", "left"),
                          *(((c, "right") for c in fmt.PUBLISHED_COLUMNS) if pub else ())):
            # labels are what a reader scans for: never wrap or cut them
            table.add_column(col, justify=just, no_wrap=col in ("environment", "metric"),
                             min_width=max(len(r["environment"]) for r in rows)
                             if col == "environment" else None)
        for r in rows:
            vs = r["vs_baseline"]
            n = f"{r['n']}" + (f" ({r['failed_trials']} failed)" if r["failed_trials"] else "")
            verdict = fmt.verdict_cell(r, analysis["run"]["baseline"])
            style = "" if not vs else ("green" if vs["verdict"] == "pass" else "red")
            table.add_row(
                r["environment"], f"{r['metric']} {fmt.direction(r['higher_is_better'])} ({r['unit']})",
                n, fmt.value(r["trimmed_mean"]), fmt.value(r["median"]),
                fmt.pct(r["cv"] * 100, signed=False) if r["cv"] is not None else "n/a",
                fmt.ci(r["ci_low"], r["ci_high"]),
                fmt.pct(vs["overhead_pct"]) if vs else "—",
                fmt.ci_pct(vs["ci_low"], vs["ci_high"]) if vs else "—",
                fmt.p(vs["p_value"]) if vs else "—",
                f"[{style}]{verdict}[/]" if style else verdict,
                *(fmt.published_cells(r, analysis["run"]["baseline"]) if pub else ()))
        yield table


def print_report(analysis: dict, console: Console) -> None:
    for line in fmt.header_lines(analysis):
        console.print(line, highlight=False)
    for table in _tables(analysis):
        console.print(table)
    if analysis.get("published_only"):
        console.print("[bold]published figures not measured in this run[/]")
        for line in fmt.published_only_lines(analysis):
            console.print(f"  {line}", highlight=False, markup=False)
    if analysis["warnings"]:
        console.print("[bold yellow]warnings[/]")
        for w in analysis["warnings"]:
            where = " · ".join(x for x in (w["environment"], w["benchmark"], w["metric"]) if x)
            console.print(f"  [yellow]{w['kind']}[/] {where}: {w['message']}", highlight=False)
    console.print("overhead: positive = worse than baseline, whatever the metric's direction; "
                  "↑ higher is better, ↓ lower is better", style="dim")


def render_text(analysis: dict, width: int = 200) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"), color_system=None)
    print_report(analysis, console)
    return console.export_text()


def print_compare(comparison: dict, console: Console) -> None:
    a, b = comparison["a"], comparison["b"]
    console.print(f"A = run {a['id']} ({a['study']}), B = run {b['id']} ({b['study']}); a change "
                  f"counts when p < {comparison['alpha']} and |change| > "
                  f"{comparison['min_change_pct']:g} %", highlight=False)
    table = Table(title_justify="left")
    for col in ("environment", "benchmark", "metric", "A", "B", "change", "95 % CI", "p", "verdict"):
        table.add_column(col)
    for r in comparison["rows"]:
        style = {"worse": "red", "better": "green"}.get(r["verdict"], "")
        table.add_row(r["environment"], r["benchmark"],
                      f"{r['metric']} {fmt.direction(r['higher_is_better'])} ({r['unit']})",
                      fmt.value(r["a"]), fmt.value(r["b"]), fmt.pct(r["change_pct"]),
                      fmt.ci_pct(r["ci_low"], r["ci_high"]), fmt.p(r["p_value"]),
                      f"[{style}]{r['verdict']}[/]" if style else r["verdict"])
    console.print(table)
    console.print("change: positive = B worse than A", style="dim")


def render_compare_text(comparison: dict, width: int = 160) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"), color_system=None)
    print_compare(comparison, console)
    return console.export_text()
