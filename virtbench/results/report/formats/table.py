"""The terminal report (`--format table`): the verdict matrix, then rich tables, one per
benchmark, in the spirit of hyperfine. Every label and message goes through
rich.markup.escape: a benchmark label such as `pi[k=17]` is text, not a style tag."""
from __future__ import annotations

from itertools import groupby

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ....core.decisions import ClaimStatus, CompareVerdict, Decided
from ....foundations.model import Comparison, RunReport
from .. import aggregates, failures, matrix, pricelist, profiles
from ..fmt import (compare, differences, header, headline, lists, numbers, published, tables,
                   tune, verdicts)
from ..exporter import Exporter
from ..fmt.declared import study_tables
from ..view import View

STYLE = {Decided.PASS: "green", Decided.FAIL: "red", Decided.INCONCLUSIVE: "yellow",
         Decided.DIFFERS: "cyan", CompareVerdict.WORSE: "red", CompareVerdict.BETTER: "green",
         ClaimStatus.HOLDS: "green", ClaimStatus.NOT_HOLDS: "red"}


def fit(table: Table) -> Table:
    """A table that folds what does not fit, never "…": a narrow terminal gets taller cells,
    not cut ones (labels that must not wrap keep no_wrap and their minimum width)."""
    for column in table.columns:
        if not column.no_wrap:
            column.overflow = "fold"
    return table


def _styled(text: str, key: str | None) -> str:
    style = STYLE.get(key or "")
    return f"[{style}]{escape(text)}[/]" if style else escape(text)


def matrix_table(analysis: RunReport, values: bool = False) -> Table:
    """The verdict matrix; `values`: each cell starts with the row's value (the compact
    report). Cells fold rather than end in "…": nothing is cut."""
    m = matrix.build(analysis, values=values)
    table = Table(title="verdicts", title_justify="left")
    table.add_column("metric", overflow="fold")
    for col in m.columns:
        table.add_column(escape(col), justify="right", overflow="fold")
    for name, cells in m.rows:
        table.add_row(escape(name), *(_styled(c.text, c.verdict) for c in cells))
    return table


def _tables(analysis: RunReport):
    pub = published.has_published(analysis)
    run = analysis.run
    baseline = run.baseline
    for bench, rows in groupby(analysis.results, key=lambda r: r.benchmark):
        rows = list(rows)
        table = Table(title=escape(f"{bench}"), title_justify="left", show_lines=False)
        width = max(len(x) for r in rows
                    for x in [r.environment] + [tables.other_label(v) for v in r.vs_others])
        for col, just in (("environment", "left"), ("metric", "left"), ("n", "right"),
                          (failures.COLUMN, "right"), ("trimmed mean", "right"),
                          ("median", "right"), ("CV", "right"), ("95 % CI", "right"),
                          *((c, "right") for c in tables.comparison_columns(run.correction)),
                          ("verdict", "left"),
                          *(((c, "right") for c in published.PUBLISHED_COLUMNS) if pub else ())):
            # labels are what a reader scans for: never wrap or cut them
            table.add_column(col, justify=just, no_wrap=col in ("environment", "metric"),
                             min_width=width if col == "environment" else None)
        for r in rows:
            vs = r.vs_baseline
            failed = failures.cell(r)
            table.add_row(
                escape(r.environment), escape(tables.metric_cell(r)),
                f"{r.n}", f"[red]{failed}[/]" if r.failed_trials else failed,
                numbers.value(r.trimmed_mean), numbers.value(r.median), tables.cv_cell(r),
                numbers.ci(r.ci_low, r.ci_high),
                *(escape(c) for c in tables.comparison_cells(r, vs, run.correction)),
                _styled(verdicts.verdict_cell(r, baseline, run.analysis),
                        vs.verdict if vs else None),
                *(escape(c) for c in (published.published_cells(r, baseline) if pub else ())))
            for other in r.vs_others:
                table.add_row(escape(tables.other_label(other)), escape(tables.metric_cell(r)),
                              *([""] * 6),
                              *(escape(c) for c in
                                tables.comparison_cells(r, other, run.correction)),
                              _styled(verdicts.vs_mark(other, baseline, run.analysis, False),
                                      other.verdict),
                              *([""] * len(published.PUBLISHED_COLUMNS) if pub else ()))
        yield table


def _print_lines(console: Console, title: str, lines: list[str], style: str = "bold") -> None:
    if lines:
        console.print(f"[{style}]{title}[/]")
        for line in lines:
            console.print(f"  {line}", highlight=False, markup=False)


def _titled_table(title: str, header: list[str], rows: list[list[str]]) -> Table:
    """A table under its title: the first column as text, the others right-aligned."""
    table = Table(title=escape(title), title_justify="left")
    table.add_column(escape(header[0]))
    for name in header[1:]:
        table.add_column(escape(name), justify="right")
    for row in rows:
        table.add_row(*(escape(c) for c in row))
    return table


def print_price_lists(analysis: RunReport, console: Console) -> None:
    """Each price list: its table, a sentence per family, the linked exits, its notes."""
    for part in pricelist.sections(analysis):
        console.print(fit(_titled_table(part.title, part.header, part.rows)))
        for sentence in part.sentences:
            console.print(f"  {sentence}", highlight=False, markup=False)
        if part.missing:
            console.print("  not measured:", style="bold")
            for line in part.missing:
                console.print(f"    {line}", highlight=False, markup=False)
        if part.exits:
            console.print("  exits linked to each primitive:", style="bold")
            for line in part.exits:
                console.print(f"    {line}", highlight=False, markup=False)
        for note in part.notes:
            console.print(f"  {note}", style="dim", highlight=False, markup=False)


def print_study_tables(analysis: RunReport, console: Console) -> None:
    """The study's own tables ([[table]]: its paper's, published beside measured)."""
    for t in study_tables(analysis):
        console.print(fit(_titled_table(t.caption, t.header, t.rows)))
        console.print(f"  {t.note}", style="dim", highlight=False, markup=False)


def print_warnings(analysis: RunReport, console: Console, verbosity: str = "normal") -> None:
    """The warnings: one line per kind (normal), every one with its details (verbose), or
    one line of counts (quiet)."""
    if not analysis.warnings:
        return
    if verbosity == "quiet":
        console.print(f"[bold yellow]{escape(lists.warning_count_line(analysis))}[/]",
                      highlight=False)
        return
    console.print("[bold yellow]warnings[/]")
    if verbosity == "verbose":
        for w in analysis.warnings:
            first, *rest = lists.warning_lines(w)
            kind, _, text = first.partition(" ")
            console.print(f"  [yellow]{escape(kind)}[/] {escape(text)}", highlight=False)
            for line in rest:
                console.print(f"  {line}", highlight=False, markup=False, style="dim")
        return
    for g in lists.groups(analysis):
        console.print(f"  [yellow]{escape(g.kind)}[/] {escape(g.line)}", highlight=False)


def print_report(analysis, console: Console, view: View = View()) -> None:
    """The run's report: the headline, the verdict matrix (with each row's value unless
    --wide), then (--wide) the per-benchmark tables with every column, the lists, the
    warnings."""
    analysis = RunReport.of(analysis)
    if analysis.density is not None:        # a density sweep's run: the sweep it stored
        print_density(analysis.density, console)
        return
    for line in header.header_lines(analysis):
        console.print(line, highlight=False, markup=False)
    _print_lines(console, tune.TITLE, tune.lines(analysis))
    _print_lines(console, headline.TITLE, headline.lines(analysis))
    _print_lines(console, differences.TITLE, differences.lines(analysis, view.wide))
    if analysis.results:
        console.print(fit(matrix_table(analysis, values=not view.wide)))
        console.print(matrix.LEGEND, style="dim", markup=False)
    if view.verbosity == "quiet":
        print_warnings(analysis, console, view.verbosity)
        return
    print_price_lists(analysis, console)
    _print_lines(console, "method notes (where virtbench deviates from the published method)",
                 lists.method_note_lines(analysis))
    if view.wide:
        print_study_tables(analysis, console)
        for table in _tables(analysis):
            console.print(fit(table))
    _print_lines(console, "inconclusive verdicts", lists.inconclusive_lines(analysis))
    _print_lines(console, "claims of the study's source, checked on this run",
                 lists.claim_lines(analysis))
    _print_lines(console, "published figures not measured in this run",
                 published.published_only_lines(analysis))
    _print_lines(console, aggregates.AGGREGATES_TITLE, aggregates.aggregate_lines(analysis))
    _print_lines(console, failures.COUNTS_TITLE, failures.count_lines(analysis))
    evidence = failures.evidence_lines(analysis)
    _print_lines(console, failures.EVIDENCE_TITLE, evidence + [failures.FOOTNOTE] if evidence
                 else [])
    print_profiles(analysis, console, view)
    print_warnings(analysis, console, view.verbosity)
    if view.wide:
        console.print(header.footer(analysis) + " ↑ higher is better, ↓ lower is better.",
                      style="dim", markup=False)
    else:
        console.print(COMPACT_FOOTER, style="dim", markup=False)


COMPACT_FOOTER = ("↑ higher is better, ↓ lower is better. Every column (trimmed mean, median, "
                  "CV, intervals, p, MDC, the published rule): virtbench report --wide, or "
                  "--format markdown.")


def print_profiles(analysis: RunReport, console: Console, view: View = View(wide=True)) -> None:
    """Exit profiles, one block per environment x benchmark (`report --profile`: only these);
    the compact report leaves out the guest addresses (the functions name them)."""
    parts = profiles.sections(analysis)
    if not parts:
        return
    console.print("[bold]exit profiles[/] (why: VM exits under KVM, would-be exits under TCG)")
    for part in parts:
        console.print(f"[bold]{escape(part.title)}[/]: {escape(part.subtitle)}",
                      highlight=False)
        console.print(f"  {escape(part.explains)}", highlight=False)
        for names, rows in ((profiles.REASON_HEADER, part.reasons),
                            (profiles.FUNCTION_HEADER, part.functions)):
            if not rows:
                continue
            keep = [i for i, col in enumerate(names) if view.wide or col != "address"]
            table = Table(show_edge=False)
            for col in (names[i] for i in keep):
                table.add_column(col, no_wrap=col in ("address", "function", "caller"),
                                 justify="right" if col in ("count", "share", "time share")
                                 else "left")
            for row in rows:
                table.add_row(*(escape(row[i]) for i in keep))
            console.print(fit(table))
        for note in part.notes:
            console.print(f"  note: {escape(note)}", style="dim", highlight=False)


def _recorder(width: int) -> Console:
    return Console(width=width, record=True, file=open("/dev/null", "w"), color_system=None)


def render_profiles_text(analysis, width: int = 200) -> str:
    analysis = RunReport.of(analysis)
    console = _recorder(width)
    print_profiles(analysis, console)
    if not analysis.profiles:
        console.print("no exit profiles in this run; record them with "
                      "`virtbench run ... --profile exits`", markup=False)
    return console.export_text()


def render_text(analysis, view: View = View()) -> str:
    console = _recorder(view.columns)
    print_report(analysis, console, view)
    return console.export_text()


def print_compare(comparison, console: Console) -> None:
    comparison = Comparison.of(comparison)
    a, b = comparison.a, comparison.b
    console.print(f"A = run {a.id} ({a.study}), B = run {b.id} ({b.study}); a change "
                  f"counts when p < {comparison.alpha} and |change| > "
                  f"{comparison.min_change_pct:g} %; same = the test could have seen that "
                  "change and did not", highlight=False, markup=False)
    for w in comparison.warnings:
        console.print(f"[bold yellow]warning[/] {escape(w)}", highlight=False)
    table = Table(title_justify="left")
    for col in ("environment", "benchmark", "metric", "A", "B", "n A/B", "change", "95 % CI",
                "p", "verdict"):
        table.add_column(col)
    for r in comparison.rows:
        table.add_row(escape(r.environment), escape(r.benchmark), escape(tables.metric_cell(r)),
                      numbers.value(r.a), numbers.value(r.b), f"{r.n_a}/{r.n_b}",
                      *compare.change_cells(r),
                      numbers.p(r.p_value), _styled(compare.compare_verdict(r), r.verdict))
    console.print(fit(table))
    console.print("change: positive = B worse than A; from 1.5× either way as a factor",
                  style="dim")
    _print_lines(console, "inconclusive", [f"{r.environment} · {r.benchmark} · "
                                            f"{r.metric}: {r.message}"
                                            for r in compare.compare_undecided(comparison)])
    for side, keys in compare.only_in(comparison):
        _print_lines(console, f"only in {side}", [" · ".join(k) for k in keys])
    _print_lines(console, "metadata that differ (A → B)", compare.difference_lines(comparison))


def render_compare_text(comparison, width: int = 160) -> str:
    console = _recorder(width)
    print_compare(comparison, console)
    return console.export_text()


def print_history(report, console: Console) -> None:
    """`virtbench history`: a row per series, then every change, one line each."""
    from .. import history
    console.print(history.header(report), highlight=False, markup=False)
    table = Table(title_justify="left")
    for col in history.COLUMNS:
        table.add_column(col)
    for s in report.series:
        table.add_row(*(escape(cell) for cell in history.row(s)))
    console.print(fit(table))
    _print_lines(console, "changes", history.change_lines(report))


def render_history_text(report, width: int = 200) -> str:
    console = _recorder(width)
    print_history(report, console)
    return console.export_text()


class TableExporter(Exporter):
    def render(self, report: RunReport, verbosity: str = "normal") -> str:
        return render_text(report, View(verbosity=verbosity))

    def render_view(self, report: RunReport, view: View) -> str:
        return render_text(report, view)

    def render_profiles(self, report: RunReport) -> str:
        return render_profiles_text(report)

    def render_compare(self, comparison: Comparison) -> str:
        return render_compare_text(comparison)

    def render_history(self, report) -> str:
        return render_history_text(report)

    def render_density(self, report) -> str:
        console = _recorder(200)
        print_density(report, console)
        return console.export_text()


def print_density(report, out: Console) -> None:
    """A density sweep: its settings and stop, then its steps."""
    from .. import density
    for line in density.summary_lines(report):
        out.print(escape(line), highlight=False)
    table = Table(title="density", title_justify="left")
    for i, col in enumerate(density.STEP_HEADER):
        table.add_column(escape(col), justify="right" if i >= 2 else "left")
    for c in report.curves:
        for s in c.steps:
            table.add_row(*(escape(x) for x in density.step_row(c, s)))
    out.print(fit(table))
