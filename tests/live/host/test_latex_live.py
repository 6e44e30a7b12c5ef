"""The LaTeX report compiles: pdflatex (Debian's TeX Live, texlive-latex-recommended for
booktabs) makes a PDF of the quick-study-like report (tests/support/reportkit.py: native,
qemu-kvm and qemu-tcg/ide/e1000 on himeno, stream and pi) and of a run whose names hold every
character LaTeX reads as markup; pdftoppm (poppler-utils) renders its pages to PNG, and
pdftotext reads the names back as they were. Skipped without pdflatex or pdftoppm
(`bash scripts/setup.sh --all` installs them)."""
from __future__ import annotations

import shutil

import pytest

from latexkit import compile_tex, needs_latex, png_pages
from storekit import open_fixture, open_saved

from virtbench.foundations.model import Result, RunReport
from virtbench.foundations.model.decision import VsReference
from virtbench.foundations.model.run import RunInfo
from virtbench.results import analysis, report

pytestmark = needs_latex

NASTY = "a_b%c&d#e$f{g}h~i^j\\k[l]"


def test_the_quick_study_report_compiles_and_renders(filled, tmp_path, artifacts_dir):
    store, run_id = filled
    tex = report.render(analysis.analyze_run(store, run_id), "latex")
    pdf, text = compile_tex(tex, tmp_path)
    for words in ("qemu-tcg/ide/e1000", "Verdicts", "himeno: each environment",
                  "stream: each environment", "pi: each environment", "paired blocks",
                  "alpha 0.05", "Holm"):
        assert words in text, words
    pages = png_pages(pdf)
    for i, page in enumerate(pages, 1):
        shutil.copy(page, artifacts_dir / f"latex-report-{i}.png")


def test_names_with_every_special_character_compile_and_print_as_themselves(tmp_path):
    vs = VsReference(reference="native", ratio=41.7, overhead_pct=4070.0, ratio_ci_low=40.0,
                     ratio_ci_high=43.0, p_value=0.0001, p_holm=0.0002, verdict="fail",
                     direction="worse")
    rows = [Result(environment="native", benchmark=NASTY, metric="m_1", unit="µs",
                   higher_is_better=False, n=5, trimmed_mean=1.0, ci_low=0.9, ci_high=1.1),
            Result(environment=f"env {NASTY}", benchmark=NASTY, metric="m_1", unit="µs",
                   higher_is_better=False, n=5, trimmed_mean=41.7, vs_baseline=vs)]
    run = RunInfo(id="r_%1", baseline="native", alpha=0.05, threshold_pct=5.0,
                  correction="holm", analysis="paired")
    pdf, text = compile_tex(report.render(RunReport(run=run, results=rows), "latex"), tmp_path)
    flat = text.replace(" ", "")
    assert NASTY in flat, text[:2000]                         # printed as written
    assert "41.7×slower" in flat and "{[}" not in flat and "textbackslash" not in flat
    png_pages(pdf)



def test_the_price_list_run_compiles_with_its_price_table(tmp_path):
    """A run of the primitives (a store saved from a real run, revision 0004)."""
    store = open_saved("primitives-0004.sql", tmp_path)
    rep = analysis.analyze_run(store, store.list_runs()[-1]["id"])
    pdf, text = compile_tex(report.render(rep, "latex"), tmp_path)
    assert "Price list · primitives" in text and "syscall_ns" in text.replace(" ", "")
    png_pages(pdf)


@pytest.mark.parametrize("name", ["real", "failures", "published", "profiles"])
def test_every_saved_run_compiles_with_its_words(tmp_path, name):
    """Runs saved from real stores: warnings, failed trials, published figures and claims,
    exit profiles; their headline, claims and warnings print as the Markdown report says
    them."""
    store, ids = open_fixture(name, tmp_path)
    for run_id in ids:
        rep = analysis.analyze_run(store, run_id)
        where = tmp_path / run_id
        where.mkdir()
        _, text = compile_tex(report.render(rep, "latex"), where)
        flat = " ".join(text.split())
        for h in rep.headline:
            if h.summary is not None:
                assert f"{h.environment} against" in flat
        for c in rep.claims:
            assert " ".join(c.text.split())[:40] in flat, c.text
        if rep.warnings:
            assert "Warnings" in flat


def test_a_studys_verdict_table_compiles_with_circles_and_crosses(tmp_path):
    """RIKEN's Table 15 as a study declares it ([[table]] kind = "verdicts"): ○ and × as
    \\bigcirc and \\times, beside the run's own tables, its names escaped."""
    from virtbench.foundations.model import DeclaredView, PublishedFigure, PublishedMatch
    from virtbench.foundations.model.decision import PublishedRule
    rule = {v: PublishedRule(ratio=r, overhead_pct=o, verdict=v)
            for v, r, o in (("pass", 0.91, 9.0), ("fail", 0.89, 11.0))}
    rows = [Result(environment="native", benchmark="dd_write", metric="write_mb_s", n=5,
                   trimmed_mean=100.0),
            Result(environment="kvm", benchmark="dd_write", metric="write_mb_s", n=5,
                   trimmed_mean=91.0, vs_baseline=VsReference(
                       reference="native", ratio=0.91, verdict="pass",
                       published_rule=rule["pass"]),
                   published=PublishedMatch(value=149.5, versus_value=788.23, verdict="fail",
                                            source="Table 15"))]
    run = RunInfo(id="r_15", study="riken-2012", baseline="native", alpha=0.05,
                  threshold_pct=10.0, correction="holm", analysis="paired")
    rep = RunReport(run=run, results=rows, published_only=[PublishedFigure(
        environment="xen:vcpus=4,mem=10G", benchmark="dd_write", metric="write_mb_s",
        verdict="fail", source="Table 15")], declared=[DeclaredView(
            what="table", name="table15", kind="verdicts", benchmarks=["dd_write"],
            title="Table 15: disk_throughput (○ within 10 %, × 10 % or more) & #1")])
    tex = report.render(rep, "latex")
    assert r"\ensuremath{\bigcirc}" in tex
    pdf, text = compile_tex(tex, tmp_path)
    flat = text.replace(" ", "")
    assert "Table15:disk_throughput" in flat and "&#1" in flat and "notrun" in flat
    png_pages(pdf)
