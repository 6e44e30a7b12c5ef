"""The Markdown report (`--format markdown`): the published studies' tables with ✓/✗ verdicts, plus
the statistics."""
from __future__ import annotations

from ....foundations.model import Comparison, RunReport
from .. import aggregates, failures, matrix, pricelist, profiles
from ..fmt import (compare, differences, header, headline, lists, numbers, published, tables,
                   tune, verdicts)
from ..fmt.declared import study_tables
from ..exporter import Exporter


def _row(cells) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def _esc(text: str) -> str:
    """Markdown text outside tables: brackets and stars as themselves (pi[k=17])."""
    return "".join("\\" + c if c in "[]*_`" else c for c in str(text))


def tune_lines(analysis: RunReport) -> list[str]:
    """## Tune: a tune run's headline in bold, its design and effects below it."""
    lines = tune.lines(analysis)
    if not lines:
        return []
    return ["## Tune", "", f"**{_esc(lines[0])}**", ""] + \
        [f"- {_esc(line.strip())}" for line in lines[1:]] + [""]


def headline_lines(analysis: RunReport) -> list[str]:
    """## Headline: each environment's summary in bold, its benchmarks below it."""
    lines = headline.lines(analysis)
    if not lines:
        return []
    out = ["## Headline", ""]
    for line in lines:
        out.append(f"  - {_esc(line.strip())}" if line.startswith("  ")
                   else f"- **{_esc(line)}**")
    return out + [""]


def difference_lines(analysis: RunReport) -> list[str]:
    """## What differs from the reference: one item per pair, its facts below it."""
    if not analysis.differences:
        return []
    out = ["## What differs from the reference", ""]
    for p in analysis.differences:
        out.append(f"- {_esc(p.line)}")
        if len(p.facts) > 1 or p.unrecorded:
            out += [f"  - {_esc(line)}" for line in differences.detail(p)]
    return out + [""]


def matrix_lines(analysis: RunReport) -> list[str]:
    m = matrix.build(analysis)
    if not m.rows:
        return []
    out = ["## Verdicts", "", _row(["metric", *m.columns]),
           _row(["---"] + ["---:"] * len(m.columns))]
    out += [_row([name, *(c.text for c in cells)]) for name, cells in m.rows]
    return out + ["", f"_{matrix.LEGEND}_", ""]


def study_table_lines(analysis: RunReport) -> list[str]:
    """## The study's own tables ([[table]]): the paper's, published beside measured."""
    out = []
    for t in study_tables(analysis):
        out += [f"## {_esc(t.caption)}", "", _row(t.header),
                _row(["---"] + ["---:"] * (len(t.header) - 1))]
        out += [_row(row) for row in t.rows] + ["", f"_{_esc(t.note)}_", ""]
    return out


def price_lines(analysis: RunReport) -> list[str]:
    """## Price list: primitive x environment, a sentence per family, the linked exits."""
    out = []
    for part in pricelist.sections(analysis):
        out += [f"## {_esc(part.title[0].upper() + part.title[1:])}", "", _row(part.header),
                _row(["---"] + ["---:"] * (len(part.header) - 1))]
        out += [_row(row) for row in part.rows]
        out += [""] + [f"- {_esc(s)}" for s in part.sentences]
        if part.missing:
            out += ["", "Not measured:", ""] + [f"- {_esc(line)}" for line in part.missing]
        if part.exits:
            out += ["", "Exits linked to each primitive:", ""]
            out += [f"- {_esc(line)}" for line in part.exits]
        for n in part.notes:
            out += ["", f"_{_esc(n)}._"]
        out.append("")
    return out


def profile_lines(analysis: RunReport) -> list[str]:
    """## Exit profiles: per environment x benchmark, exits by reason and top functions."""
    parts = profiles.sections(analysis)
    if not parts:
        return []
    out = ["", "## Exit profiles", ""]
    for part in parts:
        out += [f"### {_esc(part.title)}", "", f"{_esc(part.subtitle)}. "
                f"{_esc(part.explains)}.", ""]
        for names, rows in ((profiles.REASON_HEADER, part.reasons),
                            (profiles.FUNCTION_HEADER, part.functions)):
            if rows:
                out += [_row(names), _row(["---"] * len(names))]
                out += [_row([_esc(c) for c in row]) for row in rows]
                out.append("")
        out += [f"- note: {_esc(n)}" for n in part.notes]
    return out


def render_profiles(analysis: RunReport) -> str:
    lines = profile_lines(analysis) or ["", "No exit profiles in this run; record them with "
                                        "`virtbench run ... --profile exits`."]
    return "\n".join([f"# virtbench run {analysis.run.id}: exit profiles"] + lines) + "\n"


def _section(title: str, lines: list[str]) -> list[str]:
    return ["", f"## {title}", ""] + [f"- {line}" for line in lines] if lines else []


def warning_lines(analysis: RunReport, verbosity: str = "normal") -> list[str]:
    """## Warnings: one item per kind (normal), every warning with its details (verbose), or
    one line of counts (quiet)."""
    if not analysis.warnings:
        return []
    if verbosity == "quiet":
        return ["", f"_{_esc(lists.warning_count_line(analysis))}_", ""]
    if verbosity == "verbose":
        items = []
        for w in analysis.warnings:
            first, *rest = lists.warning_lines(w)
            kind, _, text = first.partition(" ")
            items.append(f"**{kind}** {_esc(text)}" + "".join(
                f"<br>`{line.strip().replace('`', chr(39))}`" for line in rest))
        return _section("Warnings", items)
    return _section("Warnings", [f"**{g.kind}** {_esc(g.line)}" for g in lists.groups(analysis)])


def render(analysis: RunReport, verbosity: str = "normal") -> str:
    run = analysis.run
    out = [f"# virtbench run {run.id}", ""]
    out += [f"- {_esc(line.strip())}" for line in header.header_lines(analysis)]
    out.append("")
    out += tune_lines(analysis) + headline_lines(analysis)
    out += difference_lines(analysis)
    out += matrix_lines(analysis)
    if verbosity == "quiet":
        return "\n".join(out + warning_lines(analysis, verbosity)) + "\n"
    out += study_table_lines(analysis) + price_lines(analysis)
    if analysis.method_notes:
        out += ["## Method notes", ""]
        out += [f"- {_esc(line)}" for line in lists.method_note_lines(analysis)]
        out.append("")
    current = None
    pub = published.has_published(analysis)
    cols = tables.comparison_columns(run.correction)
    for r in analysis.results:
        if r.benchmark != current:
            current = r.benchmark
            out += ["", f"## {_esc(current)}", "",
                    _row(["environment", "metric", "n", failures.COLUMN, "trimmed mean",
                          "median", "CV", "95 % CI", *cols, "verdict"]
                         + (list(published.PUBLISHED_COLUMNS) if pub else [])),
                    _row(["---"] * 2 + ["---:"] * (6 + len(cols)) + [":---:"]
                         + (["---:", "---:", "---"] if pub else []))]
        vs = r.vs_baseline
        out.append(_row(([
            r.environment, tables.metric_cell(r),
            r.n, failures.cell(r) if not r.failed_trials else f"**{failures.cell(r)}**",
            numbers.value(r.trimmed_mean), numbers.value(r.median), tables.cv_cell(r),
            numbers.ci(r.ci_low, r.ci_high), *tables.comparison_cells(r, vs, run.correction),
            verdicts.verdict_cell(r, run.baseline, run.analysis)])
            + (published.published_cells(r, run.baseline) if pub else [])))
        for other in r.vs_others:
            out.append(_row([tables.other_label(other), tables.metric_cell(r), *([""] * 6),
                             *tables.comparison_cells(r, other, run.correction),
                             verdicts.vs_mark(other, run.baseline, run.analysis, False)]
                            + ([""] * len(published.PUBLISHED_COLUMNS) if pub else [])))
    out += _section("Inconclusive verdicts", [_esc(x) for x in lists.inconclusive_lines(analysis)])
    out += _section("Claims of the study's source, checked on this run",
                    [_esc(x) for x in lists.claim_lines(analysis)])
    out += _section("Published figures not measured in this run",
                    published.published_only_lines(analysis))
    out += _section(failures.title(aggregates.AGGREGATES_TITLE),
                    [_esc(line) for line in aggregates.aggregate_lines(analysis)])
    out += _section(failures.title(failures.COUNTS_TITLE),
                    [_esc(line) for line in failures.count_lines(analysis)])
    evidence = failures.evidence_lines(analysis)
    if evidence:
        out += _section(failures.title(failures.EVIDENCE_TITLE), [_esc(x) for x in evidence])
        out += ["", f"_{_esc(failures.title(failures.FOOTNOTE))}._"]
    out += profile_lines(analysis)
    out += warning_lines(analysis, verbosity)
    out += ["", f"_{_esc(header.footer(analysis))} 95 % CI: bootstrap CI of the trimmed mean._"
            + (" _Measured ratio: environment / reference (the baseline unless named), beside "
               "the source's published ratio (derived from its table's values where it gives "
               "values) and its own ✓/✗ verdict._" if pub else ""), ""]
    return "\n".join(out)


def render_compare(comparison: Comparison) -> str:
    a, b = comparison.a, comparison.b
    out = [f"# virtbench compare {a.id} → {b.id}", "",
           f"A change counts when p < {comparison.alpha} and |change| > "
           f"{comparison.min_change_pct:g} % (positive = B worse than A; from 1.5× either way "
           "as a factor); same = the test "
           "could have seen that change and did not; inconclusive = too few trials to tell.", ""]
    for w in comparison.warnings:
        out += [f"**Warning:** {_esc(w)}", ""]
    out += [_row(["environment", "benchmark", "metric", "A", "B", "n A/B", "change", "95 % CI",
                  "p", "verdict"]),
            _row(["---"] * 3 + ["---:"] * 6 + [":---:"])]
    for r in comparison.rows:
        out.append(_row([r.environment, r.benchmark, tables.metric_cell(r),
                         numbers.value(r.a), numbers.value(r.b), f"{r.n_a}/{r.n_b}",
                         *compare.change_cells(r),
                         numbers.p(r.p_value), compare.compare_verdict(r)]))
    out += _section("Inconclusive", [f"{_esc(r.environment)} · {_esc(r.benchmark)} · "
                                     f"{_esc(r.metric)}: {_esc(r.message)}"
                                     for r in compare.compare_undecided(comparison)])
    for side, keys in compare.only_in(comparison):
        out += _section(f"Only in {side}", [_esc(" · ".join(k)) for k in keys])
    out += _section("Metadata that differ (A → B)",
                    [_esc(line) for line in compare.difference_lines(comparison)])
    return "\n".join(out) + "\n"


def render_history(report) -> str:
    """`virtbench history --format markdown`: a row per series, then every change."""
    from .. import history
    out = ["# virtbench history", "", _esc(history.header(report)), "",
           _row(history.COLUMNS), _row(["---"] * 4 + ["---:"] * 3 + ["---"] * 2)]
    out += [_row(history.row(s)) for s in report.series]
    out += _section("Changes", [_esc(line) for line in history.change_lines(report)])
    return "\n".join(out) + "\n"


def render_density(report) -> str:
    """A density sweep: its settings and stop, then a row per step."""
    from .. import density
    out = [f"# virtbench density {_esc(report.environment)}", ""]
    out += [f"- {_esc(line)}" for line in density.summary_lines(report)]
    out += ["", _row(density.STEP_HEADER), _row(["---"] * 2 + ["---:"] * 7 + ["---"])]
    out += [_row(density.step_row(c, s)) for c in report.curves for s in c.steps]
    return "\n".join(out) + "\n"


class MarkdownExporter(Exporter):
    def render(self, report: RunReport, verbosity: str = "normal") -> str:
        return render(report, verbosity)

    def render_profiles(self, report: RunReport) -> str:
        return render_profiles(report)

    def render_compare(self, comparison: Comparison) -> str:
        return render_compare(comparison)

    def render_history(self, report) -> str:
        return render_history(report)

    def render_density(self, report) -> str:
        return render_density(report)
