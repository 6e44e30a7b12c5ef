"""The Markdown report: the seed studies' tables with ✓/✗ verdicts, plus the statistics."""
from __future__ import annotations

from . import aggregates, failures, fmt, matrix, profiles


def _row(cells) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def _esc(text: str) -> str:
    """Markdown text outside tables: brackets and stars as themselves (pi[k=17])."""
    return "".join("\\" + c if c in "[]*_`" else c for c in str(text))


def matrix_lines(analysis: dict) -> list[str]:
    m = matrix.build(analysis)
    if not m.rows:
        return []
    out = ["## Verdicts", "", _row(["metric", *m.columns]),
           _row(["---"] + ["---:"] * len(m.columns))]
    out += [_row([name, *(c.text for c in cells)]) for name, cells in m.rows]
    return out + ["", f"_{matrix.LEGEND}_", ""]


def profile_lines(analysis: dict) -> list[str]:
    """## Exit profiles: per environment x benchmark, exits by reason and top functions."""
    parts = profiles.sections(analysis)
    if not parts:
        return []
    out = ["", "## Exit profiles", ""]
    for part in parts:
        out += [f"### {_esc(part['title'])}", "", f"{_esc(part['subtitle'])}. "
                f"{_esc(part['explains'])}.", ""]
        for header, rows in ((profiles.REASON_HEADER, part["reasons"]),
                             (profiles.FUNCTION_HEADER, part["functions"])):
            if rows:
                out += [_row(header), _row(["---"] * len(header))]
                out += [_row([_esc(c) for c in row]) for row in rows]
                out.append("")
        out += [f"- note: {_esc(n)}" for n in part["notes"]]
    return out


def render_profiles(analysis: dict) -> str:
    run = analysis["run"]
    lines = profile_lines(analysis) or ["", "No exit profiles in this run; record them with "
                                        "`virtbench run ... --profile exits`."]
    return "\n".join([f"# virtbench run {run['id']}: exit profiles"] + lines) + "\n"


def render(analysis: dict) -> str:
    run = analysis["run"]
    out = [f"# virtbench run {run['id']}", ""]
    out += [f"- {_esc(line.strip())}" for line in fmt.header_lines(analysis)]
    out.append("")
    out += matrix_lines(analysis)
    if analysis.get("method_notes"):
        out += ["## Method notes", ""]
        out += [f"- {_esc(line)}" for line in fmt.method_note_lines(analysis)]
        out.append("")
    current = None
    pub = fmt.has_published(analysis)
    for r in analysis["results"]:
        if r["benchmark"] != current:
            current = r["benchmark"]
            out += ["", f"## {_esc(current)}", "",
                    _row(["environment", "metric", "n", failures.COLUMN, "trimmed mean",
                          "median", "CV", "95 % CI", "overhead vs baseline", "overhead CI", "p",
                          "verdict"]
                         + (list(fmt.PUBLISHED_COLUMNS) if pub else [])),
                    _row(["---"] * 2 + ["---:"] * 9 + [":---:"]
                         + (["---:", "---:", "---"] if pub else []))]
        vs = r["vs_baseline"]
        out.append(_row(([
            r["environment"], f"{r['metric']} {fmt.direction(r['higher_is_better'])} ({r['unit']})",
            r["n"], failures.cell(r) if not r["failed_trials"] else f"**{failures.cell(r)}**",
            fmt.value(r["trimmed_mean"]), fmt.value(r["median"]),
            fmt.pct(r["cv"] * 100, signed=False) if r["cv"] is not None else "n/a",
            fmt.ci(r["ci_low"], r["ci_high"]),
            fmt.pct(vs["overhead_pct"]) if vs else "—",
            fmt.ci_pct(vs["ci_low"], vs["ci_high"]) if vs else "—",
            fmt.p(vs["p_value"]) if vs else "—",
            fmt.verdict_cell(r, run["baseline"])])
            + (fmt.published_cells(r, run["baseline"]) if pub else [])))
    undecided = [r for r in analysis["results"]
                 if r["vs_baseline"] and r["vs_baseline"]["verdict"] == "inconclusive"]
    if undecided:
        out += ["", "## Inconclusive verdicts", ""]
        out += [f"- {_esc(r['environment'])} · {_esc(r['benchmark'])} · {_esc(r['metric'])}: "
                f"{_esc(r['vs_baseline']['message'])}" for r in undecided]
    if analysis.get("published_only"):
        out += ["", "## Published figures not measured in this run", ""]
        out += [f"- {line}" for line in fmt.published_only_lines(analysis)]
    agg = aggregates.aggregate_lines(analysis)
    if agg:
        out += ["", f"## {failures.title(aggregates.AGGREGATES_TITLE)}", ""]
        out += [f"- {_esc(line)}" for line in agg]
    counts = failures.count_lines(analysis)
    if counts:
        out += ["", f"## {failures.title(failures.COUNTS_TITLE)}", ""]
        out += [f"- {_esc(line)}" for line in counts]
    evidence = failures.evidence_lines(analysis)
    if evidence:
        out += ["", f"## {failures.title(failures.EVIDENCE_TITLE)}", ""]
        out += [f"- {_esc(line)}" for line in evidence]
        out += ["", f"_{_esc(failures.title(failures.FOOTNOTE))}._"]
    out += profile_lines(analysis)
    if analysis["warnings"]:
        out += ["", "## Warnings", ""]
        for w in analysis["warnings"]:
            where = " · ".join(x for x in (w["environment"], w["benchmark"], w["metric"]) if x)
            out.append(f"- **{w['kind']}** {_esc(where)}: {_esc(w['message'])}")
    out += ["", "_Trimmed mean: the seed method (drop the highest and the lowest sample, mean of "
            "the rest). Overhead: positive = worse than the baseline, whatever the metric's "
            "direction. CI: 95 % bootstrap. p: two-sided permutation test of the trimmed means; "
            f"verdicts at alpha {run.get('alpha', 0.05):g}._"
            + (" _Measured ratio: environment / reference (the baseline unless named), beside "
               "the source's published ratio (derived from its table's values where it gives "
               "values) and its own ✓/✗ verdict._" if pub else ""), ""]
    return "\n".join(out)


def render_compare(comparison: dict) -> str:
    a, b = comparison["a"], comparison["b"]
    out = [f"# virtbench compare {a['id']} → {b['id']}", "",
           f"A change counts when p < {comparison['alpha']} and |change| > "
           f"{comparison['min_change_pct']:g} % (positive = B worse than A); same = the test "
           "could have seen that change and did not; inconclusive = too few trials to tell.", ""]
    for w in comparison.get("warnings") or []:
        out += [f"**Warning:** {_esc(w)}", ""]
    out += [_row(["environment", "benchmark", "metric", "A", "B", "n A/B", "change", "95 % CI",
                  "p", "verdict"]),
            _row(["---"] * 3 + ["---:"] * 6 + [":---:"])]
    for r in comparison["rows"]:
        verdict = r["verdict"] + (f" (≥ {r['trials_needed']} trials)"
                                  if r["verdict"] == "inconclusive" and r.get("trials_needed") else "")
        out.append(_row([r["environment"], r["benchmark"],
                         f"{r['metric']} {fmt.direction(r['higher_is_better'])} ({r['unit']})",
                         fmt.value(r["a"]), fmt.value(r["b"]), f"{r.get('n_a')}/{r.get('n_b')}",
                         fmt.pct(r["change_pct"]), fmt.ci_pct(r["ci_low"], r["ci_high"]),
                         fmt.p(r["p_value"]), verdict]))
    undecided = [r for r in comparison["rows"] if r["verdict"] == "inconclusive" and r.get("message")]
    if undecided:
        out += ["", "## Inconclusive", ""]
        out += [f"- {_esc(r['environment'])} · {_esc(r['benchmark'])} · {_esc(r['metric'])}: "
                f"{_esc(r['message'])}" for r in undecided]
    for side, key in (("A", "only_in_a"), ("B", "only_in_b")):
        if comparison.get(key):
            out += ["", f"## Only in {side}", ""]
            out += [f"- {_esc(' · '.join(k))}" for k in comparison[key]]
    if comparison.get("metadata_differences"):
        out += ["", "## Metadata that differ (A → B)", ""]
        out += [f"- {_esc(line)}" for line in fmt.difference_lines(comparison)]
    return "\n".join(out) + "\n"
