"""The LaTeX report (`--format latex`, virtbench/results/report/formats/latex.py) and its
escaping (report/fmt/latex_escape.py): every character pdflatex reads as markup is escaped,
the report's symbols become commands, and the document holds a booktabs table per part (the
verdict matrix, one per benchmark, the price list, a tune's effects) with the method stated.
Structure only here; tests/live/host/test_latex_live.py compiles it with pdflatex."""
from __future__ import annotations

import re

import pytest
from storekit import open_fixture, open_saved

from virtbench.core.errors import VirtbenchError
from virtbench.foundations.model import Result, RunReport
from virtbench.foundations.model.decision import VsReference
from virtbench.foundations.model.run import RunInfo
from virtbench.foundations.model.tune import TuneDesign, TuneEffect, TuneReport
from virtbench.interface.cli import commands as cli
from virtbench.results import analysis, report
from virtbench.results.report.fmt.latex_escape import escape, label


@pytest.mark.parametrize("raw, tex", [
    ("a_b", r"a\_b"), ("50%", r"50\%"), ("R&D", r"R\&D"), ("#1", r"\#1"), ("$5", r"\$5"),
    ("{x}", r"\{x\}"), ("~", r"\textasciitilde{}"), ("x^2", r"x\textasciicircum{}2"),
    ("a\\b", r"a\textbackslash{}b"), ("[1, 2]", "{[}1, 2{]}"),
    ("qemu-tcg/ide/e1000", "qemu-tcg/ide/e1000"), ("pi[k=17]", "pi{[}k=17{]}"),
    ("✓", r"\ensuremath{\checkmark}"), ("✗", r"\ensuremath{\boxtimes}"),
    ("37.5× slower", r"37.5\ensuremath{\times} slower"), ("≥3", r"\ensuremath{\geq}3"),
    ("µs", r"\ensuremath{\mu}s"), ("a · b", r"a \ensuremath{\cdot} b"), ("—", "---"),
    ("line\nbreak", "line break"), ("café", "café"), ("日", "?"),
    ("--verbose", "-{}-verbose"), ("a---b", "a-{}-{}-b"), ("x-y", "x-y"),
])
def test_each_special_character_is_escaped(raw, tex):
    assert escape(raw) == tex


def test_an_escaped_string_holds_no_bare_special_character():
    nasty = "\\_%&#${}~^[]"
    out = escape(nasty * 3)
    # remove the escapes; nothing special may remain
    rest = out
    for cmd in (r"\textbackslash{}", r"\textasciitilde{}", r"\textasciicircum{}", "{[}", "{]}",
                r"\_", r"\%", r"\&", r"\#", r"\$", r"\{", r"\}"):
        rest = rest.replace(cmd, "")
    assert rest == ""


def test_labels_are_letters_digits_and_dashes():
    assert label("qemu-tcg/ide/e1000 · pi") == "qemu-tcg-ide-e1000-pi"
    assert label("virtbench-pi[k=17]") == "virtbench-pi-k-17"
    assert label("__") == "x"


def _vs(**more) -> VsReference:
    fields = dict(reference="native", ratio=1.25, overhead_pct=25.0, ratio_ci_low=1.2,
                  ratio_ci_high=1.3, p_value=0.001, p_holm=0.004, verdict="fail",
                  direction="worse")
    return VsReference(**{**fields, **more})


def _report(tune: TuneReport | None = None) -> RunReport:
    """A run with names full of special characters."""
    run = RunInfo(id="r_1", baseline="native", alpha=0.05, threshold_pct=5.0,
                  correction="holm", analysis="paired")
    rows = [Result(environment="native", benchmark="pi[k=17]", metric="time_s", unit="s",
                   higher_is_better=False, n=8, trimmed_mean=1.0, ci_low=0.9, ci_high=1.1),
            Result(environment="qemu_x&y", benchmark="pi[k=17]", metric="time_s", unit="s",
                   higher_is_better=False, n=8, trimmed_mean=1.25, ci_low=1.2, ci_high=1.3,
                   vs_baseline=_vs()),
            Result(environment="qemu_x&y", benchmark="io#2", metric="rate_%", unit="%",
                   n=8, trimmed_mean=50.0, vs_baseline=_vs(ratio=0.99, overhead_pct=1.0,
                                                          verdict="pass", direction=None))]
    return RunReport(run=run, results=rows, tune=tune)


def _tables(tex: str) -> list[str]:
    return re.findall(r"\\begin\{table\}.*?\\end\{table\}", tex, re.S)


def _caption(t: str) -> str:
    return re.search(r"\\caption\{(.*)\}", t).group(1)


def test_a_document_with_the_matrix_and_a_table_per_benchmark():
    tex = report.render(_report(), "latex")
    assert tex.startswith(r"\documentclass{article}") and tex.rstrip().endswith(r"\end{document}")
    assert r"\usepackage{booktabs}" in tex
    tables = _tables(tex)
    assert [_caption(t) for t in tables] == [
        "Verdicts: each metric's change against the reference",
        "pi{[}k=17{]}: each environment against its reference",
        r"io\#2: each environment against its reference"]
    for t in tables:
        assert t.count(r"\toprule") == t.count(r"\midrule") == t.count(r"\bottomrule") == 1
        assert r"\hline" not in t
    assert r"\label{tab:virtbench-pi-k-17}" in tex


def test_each_row_has_as_many_cells_as_its_header():
    for t in _tables(report.render(_report(), "latex")):
        spec = re.search(r"\\begin\{tabular\}\{(\w+)\}", t).group(1)
        body = t[t.index(r"\toprule"):t.index(r"\bottomrule")]
        rows = [r for r in body.split("\n") if r.endswith(r"\\")]
        assert rows and all(len(re.split(r"(?<!\\)&", r)) == len(spec) for r in rows)


def test_a_benchmark_row_says_value_interval_change_its_interval_p_and_corrected_p():
    tex = report.render(_report(), "latex")
    pi = _tables(tex)[1]
    head = next(r for r in pi.split("\n") if r.startswith("environment"))
    assert head == (r"environment & metric & n & trimmed mean & CI & change & change CI & p "
                    r"& p Holm & verdict \\")
    row = next(r for r in pi.split("\n") if r.startswith(r"qemu\_x\&y"))
    cells = [c.strip() for c in re.split(r"(?<!\\)&", row.removesuffix(r"\\"))]
    assert cells[3:9] == ["1.25", "{[}1.2, 1.3{]}", r"+25.0 \%", "{[}+20.0, +30.0{]}",
                          "0.001", "0.004"]
    assert cells[9].startswith(r"\ensuremath{\boxtimes} fail")


def test_every_table_states_the_method():
    tex = report.render(_report(), "latex")
    for t in _tables(tex):
        note = t[t.index(r"\footnotesize"):]
        assert "paired blocks" in note and "95 \\% interval" in note
        assert "alpha 0.05" in note and "Holm over the run's 2 comparisons" in note
        assert "threshold of \\ensuremath{\\pm}5 \\%" in note


def test_the_correction_named_is_the_runs():
    r = _report()
    bh = r.model_copy(update={"run": r.run.model_copy(update={"correction": "bh"})})
    tex = report.render(bh, "latex")
    assert "Benjamini-Hochberg over" in tex and "& p Benjamini-Hochberg &" in tex


def _tune() -> TuneReport:
    effects = [TuneEffect(knob="cpu_s", levels=["1", "2"], benchmark="pi[k=17]",
                          metric="time_s", effect_pct=-30.0, low_pct=-35.0, high_pct=-24.5,
                          decision="matters", better_level="2", blocks=4),
               TuneEffect(knob="mem", levels=["1G", "4G"], benchmark="pi[k=17]",
                          metric="time_s", decision="undecided", blocks_needed=12, blocks=4)]
    return TuneReport(min_effect_pct=7.5, design=TuneDesign(kind="full factorial"),
                      knobs=effects, headline="recommended: cpu_s=2")


def test_a_tune_run_has_its_effects_table_first():
    tables = _tables(report.render(_report(_tune()), "latex"))
    assert _caption(tables[0]) == "Tune: each knob's effect"
    rows = [r for r in tables[0].split("\n") if r.startswith(("cpu", "mem"))]
    assert rows == [
        r"cpu\_s & 1 \ensuremath{\rightarrow} 2 & pi{[}k=17{]} \ensuremath{\cdot} time\_s & "
        r"-30.0 \% & {[}-35.0, -24.5{]} & 4 & matters (better: 2) \\",
        r"mem & 1G \ensuremath{\rightarrow} 4G & pi{[}k=17{]} \ensuremath{\cdot} time\_s & "
        r"n/a & n/a & 4 & undecided (\ensuremath{\geq} 12 blocks) \\"]
    assert "recommended: cpu\\_s=2" in tables[0] and "beyond \\ensuremath{\\pm}7.5 \\%" in tables[0]
    assert "Tune:" not in report.render(_report(), "latex")


@pytest.mark.parametrize("name", ["real", "failures", "published", "profiles"])
def test_every_saved_run_renders_with_a_table_per_benchmark(tmp_path, name):
    store, ids = open_fixture(name, tmp_path)
    for run_id in ids:
        rep = analysis.analyze_run(store, run_id)
        tex = report.render(rep, "latex")
        benches = list(dict.fromkeys(r["benchmark"] for r in rep["results"]))
        captions = [_caption(t) for t in _tables(tex)]
        assert captions[1:] == [f"{escape(b)}: each environment against its reference"
                                for b in benches]
        assert tex.count(r"\begin{table}") == tex.count(r"\end{table}") == len(benches) + 1
        assert "✓" not in tex and "×" not in tex and "·" not in tex


def test_the_price_list_run_has_its_price_table(tmp_path):
    store = open_saved("primitives-0004.sql", tmp_path)
    run_id = store.list_runs()[-1]["id"]
    rep = analysis.analyze_run(store, run_id)
    tables = _tables(report.render(rep, "latex"))
    (price,) = [t for t in tables if _caption(t).startswith("Price list")]
    assert _caption(price) == r"Price list \ensuremath{\cdot} primitives"
    body = price[price.index(r"\midrule"):price.index(r"\bottomrule")]
    assert body.count(r"\\") == len(rep["price_lists"][0]["rows"]) == 23
    assert "syscall\\_ns" in body and "native (baseline)" in price


def test_compare_is_a_table_and_profiles_say_they_have_no_form(tmp_path):
    store, (a, b) = open_fixture("real", tmp_path)
    cmp = analysis.compare_runs(analysis.analyze_run(store, a), analysis.analyze_run(store, b))
    tex = report.render_compare(cmp, "latex")
    (t,) = _tables(tex)
    assert "\\ensuremath{\\rightarrow}" in _caption(t) and "& change CI & p & verdict" in t
    with pytest.raises(VirtbenchError, match="format latex has no form for exit profiles"):
        report.render_profiles(analysis.analyze_run(store, a), "latex")


def test_the_cli_offers_latex(tmp_path, capsys):
    store, (a, _) = open_fixture("real", tmp_path)
    assert cli.main(["report", a, "--format", "latex", "--store", store.url]) == 0
    assert capsys.readouterr().out.startswith(r"\documentclass{article}")


def _balanced(tex: str) -> None:
    assert tex.count(r"\begin{itemize}") == tex.count(r"\end{itemize}")
    depth = 0
    for line in tex.splitlines():
        depth += line.startswith(r"\begin{itemize}") - line.startswith(r"\end{itemize}")
        assert depth >= 0
        if line.startswith(r"\item"):
            assert depth > 0, line


def test_a_tune_run_says_its_design_and_refinement_under_its_headline():
    from virtbench.foundations.model.tune import TuneStep
    tune = _tune().model_copy(update={"refinement": [TuneStep(
        knob="cpu_s", level="1.5", environment="r1", reference="r0",
        levels={"cpu_s": "1.5"}, vs_best=_vs(reference="r0"), moved=False)],
        "trade_off": "pi_faster & io#2 slower"})
    tex = report.render(_report(tune), "latex")
    section = tex[tex.index(r"\subsection*{Tune}"):tex.index(r"\begin{table}")]
    assert r"\textbf{recommended: cpu\_s=2}" in section
    assert r"\item design: full factorial" in section
    refine = [line for line in section.splitlines() if line.startswith(r"\item refine:")]
    assert len(refine) == 1 and "cpu\\_s=1.5" in refine[0]
    assert r"\item trade-off: pi\_faster \& io\#2 slower" in section
    assert "time\\_s:" not in section          # the effects are the table's rows, not items
    _balanced(tex)


def test_headline_nests_benchmarks_under_each_environment_in_bold(tmp_path):
    from virtbench.results.report.formats import latex_sections
    tex = "\n".join(latex_sections.items(["qemu_a against native: 1.5× slower",
                                          "  pi: 1.5× slower", "  io#2: equivalent",
                                          "b against native: equivalent"], True))
    assert tex.splitlines() == [
        r"\begin{itemize}\raggedright", r"\item \textbf{qemu\_a against native: "
        r"1.5\ensuremath{\times} slower}", r"\begin{itemize}",
        r"\item pi: 1.5\ensuremath{\times} slower", r"\item io\#2: equivalent",
        r"\end{itemize}", r"\item \textbf{b against native: equivalent}", r"\end{itemize}"]
    assert latex_sections.section("Headline", []) == []


@pytest.mark.parametrize("name", ["real", "published"])
def test_a_saved_run_says_its_headline_claims_and_warnings(tmp_path, name):
    store, ids = open_fixture(name, tmp_path)
    rep = analysis.analyze_run(store, ids[-1])
    tex = report.render(rep, "latex")
    _balanced(tex)
    titles = [line for line in tex.splitlines() if line.startswith(r"\subsection*")]
    expected = (["Headline"] if any(h.summary for h in rep.headline) else []) \
        + (["What differs from the reference"] if rep.differences else []) \
        + (["Method notes"] if rep.method_notes else [])
    assert [t[len(r"\subsection*{"):-1] for t in titles][:len(expected)] == expected
    if rep.claims:
        assert r"\subsection*{Claims of the study's source, checked on this run}" in tex
        assert tex.count(r"\item ", tex.index("Claims of the study")) >= len(rep.claims)
    if rep.warnings:
        assert titles[-1] == r"\subsection*{Warnings}"
    assert "bootstrap" in tex and r"\item run " in tex
