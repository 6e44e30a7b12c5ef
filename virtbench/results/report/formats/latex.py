"""The LaTeX report (`--format latex`): a paper's tables, booktabs, as a document pdflatex
compiles as it is (or to copy the tables from): the verdict matrix; a table per benchmark
with each environment's value and interval, the ratio to its reference and its interval, p
and p after the family's correction; the price list when the run has one; a tune run's
effects. Each table's note states the method; the words around the tables (the run, the
headline, what differs, claims, warnings...) are latex_sections.py's. The same content as the Markdown report
(formats/markdown.py), said by the same pieces (fmt/, words/); every text through
fmt/latex_escape.py."""
from __future__ import annotations

from ....foundations.model import Comparison, RunReport
from .. import matrix, pricelist
from ..exporter import Exporter
from ..fmt import compare, header, numbers, tables, verdicts
from ..fmt.declared import study_tables
from ..fmt.latex_escape import escape, label
from . import latex_sections as words

PREAMBLE = [r"\documentclass{article}", r"\usepackage[T1]{fontenc}",
            r"\usepackage[margin=2cm]{geometry}", r"\usepackage{booktabs}",
            r"\usepackage{graphicx}",
            r"\usepackage{amssymb}", r"\begin{document}"]
BENCH_COLUMNS = ["environment", "metric", "n", "trimmed mean", "CI", "change", "change CI",
                 "p", "p adj", "verdict"]


def _row(cells) -> str:
    return " & ".join(escape(c) for c in cells) + r" \\"


def table(caption: str, key: str, head: list[str], rows: list[list[str]],
          note: str = "") -> list[str]:
    """One booktabs table: the first column left, the others right, shrunk to the line when
    wider than it (never enlarged); `note` below it."""
    spec = "l" + "r" * (len(head) - 1)
    out = [r"\begin{table}[htbp]", r"\centering", r"\small",
           rf"\caption{{{escape(caption)}}}", rf"\label{{tab:{label(key)}}}",
           r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",
           rf"\begin{{tabular}}{{{spec}}}", r"\toprule", _row(head), r"\midrule"]
    out += [_row(r) for r in rows]
    out += [r"\bottomrule", r"\end{tabular}}"]
    if note:
        out += [r"\par\smallskip", rf"\parbox{{\linewidth}}{{\footnotesize {escape(note)}}}"]
    return out + [r"\end{table}", ""]


def method_note(report: RunReport) -> str:
    """The method in one paragraph: the analysis, the interval, alpha, the correction over
    the family, the threshold (fmt/header.py's words)."""
    run = report.run
    conf = f"{(1 - run.alpha) * 100:g} %"
    return (f"Method: {header.ANALYSES.get(run.analysis, run.analysis or 'paired blocks')}; "
            f"change: the environment against its reference (the baseline "
            f"{run.baseline or '(none)'} unless named), overhead in % (positive = worse "
            f"whatever the metric's direction), from 1.5× either way as a factor, with its "
            f"{conf} interval; p: the p of the claim the verdict makes, adjusted by "
            f"{header.CORRECTIONS.get(run.correction, run.correction)} over the run's "
            f"{header.family_size(report)} comparisons; verdicts at alpha {run.alpha:g} "
            f"against a threshold of ±{run.threshold_pct:g} %.")


def matrix_table(report: RunReport) -> list[str]:
    m = matrix.build(report)
    if not m.rows:
        return []
    return table("Verdicts: each metric's change against the reference", "virtbench-verdicts",
                 ["metric", *m.columns], [[name, *(c.text for c in cells)]
                                          for name, cells in m.rows],
                 f"{matrix.LEGEND}. {method_note(report)}")


def _bench_row(r, vs, run, env: str) -> list[str]:
    cells = tables.comparison_cells(r, vs, run.correction)[1:5] if vs else ["—"] * 4
    mark = (verdicts.verdict_cell(r, run.baseline, run.analysis) if vs is r.vs_baseline
            else verdicts.vs_mark(vs, run.baseline, run.analysis, False))
    return [env, tables.metric_cell(r), str(r.n), numbers.value(r.trimmed_mean),
            numbers.ci(r.ci_low, r.ci_high), *cells, mark]


def benchmark_tables(report: RunReport) -> list[str]:
    """A table per benchmark: a row per environment and metric, one per further reference."""
    run, out, groups = report.run, [], {}
    for r in report.results:
        groups.setdefault(r.benchmark, []).append(r)
    head = [*BENCH_COLUMNS[:8], f"p {header.CORRECTIONS.get(run.correction, 'adj')}",
            BENCH_COLUMNS[-1]]
    note = (f"Trimmed mean: drop the highest and the lowest sample, mean of the rest; CI: "
            f"its bootstrap 95 % interval. {method_note(report)}")
    for bench, results in groups.items():
        rows = []
        for r in results:
            rows.append(_bench_row(r, r.vs_baseline, run, r.environment))
            rows += [_bench_row(r, o, run, tables.other_label(o)) for o in r.vs_others]
        out += table(f"{bench}: each environment against its reference",
                     f"virtbench-{bench}", head, rows, note)
    return out


def price_tables(report: RunReport) -> list[str]:
    out = []
    for part in pricelist.sections(report):
        note = " ".join([*part.sentences, *part.notes])
        out += table(part.title[0].upper() + part.title[1:], f"virtbench-{part.title}",
                     part.header, part.rows, note)
    return out


def _effect_row(e) -> list[str]:
    if e.effect_pct is None:
        change, span = "n/a", "n/a"
    else:
        change, span = f"{e.effect_pct:+.1f} %", f"[{e.low_pct:+.1f}, {e.high_pct:+.1f}]"
    decision = str(e.decision) + (f" (better: {e.better_level})" if e.better_level else "") \
        + (f" (≥ {e.blocks_needed} blocks)" if e.blocks_needed else "")
    return [e.knob, " → ".join(e.levels) or "—", f"{e.benchmark} · {e.metric}", change, span,
            str(e.blocks), decision]


def tune_table(report: RunReport) -> list[str]:
    """A tune run's effects: a row per knob (and interaction) and metric."""
    tune = report.tune
    if tune is None:
        return []
    rows = [_effect_row(e) for e in [*tune.knobs, *tune.interactions]]
    note = (f"{tune.headline}. Effect: the metric's change from the first level to the "
            f"second, with its interval (Bonferroni over each metric's effects); matters "
            f"beyond ±{tune.min_effect_pct:g} %, no effect within it.")
    return table("Tune: each knob's effect", "virtbench-tune",
                 ["knob", "levels", "metric", "effect", "interval", "blocks", "decision"],
                 rows, note)


def declared_tables(report: RunReport) -> list[str]:
    """The study's own tables ([[table]]: its paper's), published beside measured."""
    out = []
    for t in study_tables(report):
        out += table(t.caption, f"study-{t.name}", t.header, t.rows, t.note)
    return out


def render(report: RunReport) -> str:
    out = [*PREAMBLE, "", rf"\section*{{{escape(f'virtbench run {report.run.id}')}}}", "",
           *words.run_lines(report)]
    out += words.tune_section(report) + tune_table(report)
    out += words.headline_section(report) + words.differences_section(report)
    out += declared_tables(report) + matrix_table(report) + price_tables(report)
    out += words.method_notes_section(report)
    tables = benchmark_tables(report)
    out += tables or ["No results in this run.", ""]
    out += words.closing_sections(report)
    return "\n".join(out + [r"\end{document}", ""])


def render_compare(comparison: Comparison) -> str:
    """Two runs side by side: one table, a row per environment, benchmark and metric."""
    a, b = comparison.a, comparison.b
    rows = [[r.environment, r.benchmark, tables.metric_cell(r), numbers.value(r.a),
             numbers.value(r.b), f"{r.n_a}/{r.n_b}", *compare.change_cells(r),
             numbers.p(r.p_value), compare.compare_verdict(r)] for r in comparison.rows]
    note = (f"A change counts when p < {comparison.alpha} and |change| > "
            f"{comparison.min_change_pct:g} % (positive = B worse than A; from 1.5× either "
            "way as a factor).")
    out = [*PREAMBLE, ""]
    out += table(f"virtbench compare {a.id} → {b.id}", f"virtbench-compare-{a.id}-{b.id}",
                 ["environment", "benchmark", "metric", "A", "B", "n A/B", "change",
                  "change CI", "p", "verdict"], rows, note)
    return "\n".join(out + [r"\end{document}", ""])


def render_density(report) -> str:
    """A density sweep: one table, a row per curve and step, its settings and stop below."""
    from .. import density
    rows = [density.step_row(c, s) for c in report.curves for s in c.steps]
    key = f"virtbench-density-{report.run_id or report.environment}"
    out = [*PREAMBLE, ""]
    out += table(f"virtbench density {report.environment}", key, density.STEP_HEADER, rows,
                 " ".join(density.summary_lines(report)))
    return "\n".join(out + [r"\end{document}", ""])


class LatexExporter(Exporter):
    def render(self, report: RunReport) -> str:
        return render(report)

    def render_compare(self, comparison: Comparison) -> str:
        return render_compare(comparison)

    def render_density(self, report) -> str:
        return render_density(report)
