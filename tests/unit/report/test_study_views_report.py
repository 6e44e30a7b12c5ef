"""A study's own tables and figures from reports built by hand (fmt/declared.py,
figures/declared.py): Table 15's ○/× by the published rule (9 % passes, 11 % fails at 10 %),
the paper's marks beside, published values beside measured, exits "not measured" without a
profile, the LaTeX, Markdown and HTML tables (escaping), and the figures' bars and points."""
from __future__ import annotations

import pytest

from matplotlib.patches import Rectangle

from virtbench import __version__
from virtbench.foundations.model import (DeclaredView, EnvironmentRecord, FunctionRow,
                                         MetricIdentity, Profile, PublishedFigure,
                                         PublishedMatch, ReasonRow, Result, RunInfo, RunReport,
                                         VsReference)
from virtbench.results.analysis.decide import published_rule
from virtbench.results.report.figures import declared as figs
from virtbench.results.report.fmt import declared
from virtbench.results.report.formats import html, latex, markdown

KVM, XEN = "qemu-kvm", "xen:vcpus=4,mem=10G"
NATIVE = [100.0, 101.0, 99.0, 100.0]


def _row(env, bench, metric, samples, published=None, ref=None, unit="MB/s"):
    vs = None
    if ref is not None:
        vs = VsReference(ratio=sum(samples) / sum(ref),
                         published_rule=published_rule(samples, ref, True, 10.0))
    mean = sum(samples) / len(samples)
    return Result(environment=env, benchmark=bench, metric=metric, unit=unit, n=len(samples),
                  samples=samples, trimmed_mean=mean, vs_baseline=vs, published=published)


def _report(views, profiles=()) -> RunReport:
    """native and KVM on dd (9 % slower) and hdparm (11 % slower); the paper's marks: dd ×
    and hdparm ○ for KVM; Xen only published (dd ×)."""
    dd_kvm = [x * 0.91 for x in NATIVE]
    hd_kvm = [x * 0.89 for x in NATIVE]
    return RunReport(
        run=RunInfo(id="run-15", study="riken-2012", baseline="native", threshold_pct=10,
                    virtbench_version=__version__),
        environments=[EnvironmentRecord(label="native", spec="native"),
                      EnvironmentRecord(label=KVM, spec="qemu:vcpus=4,mem=10G")],
        results=[_row("native", "dd_write", "write_mb_s", NATIVE),
                 _row(KVM, "dd_write", "write_mb_s", dd_kvm, ref=NATIVE,
                      published=PublishedMatch(value=149.5, versus_value=788.23,
                                               ratio=149.5 / 788.23, verdict="fail",
                                               source="Table 15", measured_ratio=0.91)),
                 _row(KVM, "dd_write", "seconds", [1.0, 1.1], unit="s"),
                 _row("native", "hdparm", "read_mb_s", NATIVE),
                 _row(KVM, "hdparm", "read_mb_s", hd_kvm, ref=NATIVE,
                      published=PublishedMatch(value=110.0, versus_value=115.41,
                                               ratio=110 / 115.41, verdict="pass",
                                               source="Table 15", measured_ratio=0.89))],
        published_only=[PublishedFigure(environment=XEN, benchmark="dd_write",
                                        metric="write_mb_s", value=199.69,
                                        versus_value=788.23, ratio=199.69 / 788.23,
                                        verdict="fail", source="Table 15")],
        profiles=list(profiles), declared=views)


T15 = DeclaredView(what="table", name="t15", kind="verdicts", benchmarks=["dd_write", "hdparm"],
                   title="Table 15 & 100% of #1", source="Table 15")


def test_the_verdict_matrix_is_the_published_rule_beside_the_papers_marks():
    (t,) = declared.study_tables(_report([T15]))
    assert t.header == ["benchmark · metric", f"{KVM} paper", f"{KVM} here", f"{XEN} paper",
                        f"{XEN} here"]
    # rows: the metrics with a published figure only (not dd's seconds); 9 % ○, 11 % ×
    assert t.rows == [["dd_write · write_mb_s", "×", "○", "×", "not run"],
                      ["hdparm · read_mb_s", "○", "×", "—", "not run"]]
    assert "±10 %" in t.note and "Table 15" in t.note


def test_a_row_without_a_reference_says_so_not_a_mark():
    report = _report([T15])
    report.results = [r for r in report.results if r.environment != "native"
                      or r.benchmark != "hdparm"]
    next(r for r in report.results if r.benchmark == "hdparm").vs_baseline = None
    (t,) = declared.study_tables(report)
    assert t.rows[1] == ["hdparm · read_mb_s", "○", "n/a", "—", "not run"]
    assert "n/a: no comparison" in t.note


def test_the_matrix_follows_the_runs_threshold():
    report = _report([T15])
    for r in report.results:
        if r.vs_baseline is not None:
            r.vs_baseline.published_rule = published_rule(r.samples, NATIVE, True, 12.0)
    (t,) = declared.study_tables(report)
    assert [row[2] for row in t.rows] == ["○", "○"]


def test_values_put_the_published_figure_beside_the_measured():
    view = DeclaredView(what="table", name="v", kind="values", benchmarks=["dd_write"])
    (t,) = declared.study_tables(_report([view]))
    rows = {row[2]: row[3:] for row in t.rows}
    assert rows["native"][:2] == ["788.2", "100 MB/s"]           # the paper's reference value
    assert rows[KVM] == ["149.5", "91 MB/s", "0.190", "0.910"]
    assert rows[XEN] == ["199.7", "not run", "0.253", "—"]


def test_exits_say_not_measured_without_a_profile_and_count_with_one():
    view = DeclaredView(what="table", name="ex", kind="exits", benchmarks=["hdparm"],
                        hot={"ioread16": 16545487, "iowrite16": 14317411})
    (t,) = declared.study_tables(_report([view]))
    assert t.rows == [["ioread16", "16545487", "not measured"],
                      ["iowrite16", "14317411", "not measured"]]
    assert "run with --profile exits" in t.note
    prof = Profile(environment=KVM, benchmark="hdparm", source="kvm",
                   by_function=[FunctionRow(address="0xc1", function="ioread16+0x1c", count=40),
                                FunctionRow(address="0xc2", function="ioread16+0x30", count=2),
                                FunctionRow(address="0xc3", count=5)],
                   by_reason=[ReasonRow(reason="IO_INSTRUCTION", count=47)])
    (t,) = declared.study_tables(_report([view], [prof]))
    assert t.header == ["exits at", "paper", f"{KVM} · hdparm"]
    assert t.rows == [["ioread16", "16545487", "42"], ["iowrite16", "14317411", "—"],
                      ["0xc3", "—", "5"], ["reason IO_INSTRUCTION", "—", "47"]]


def test_latex_draws_circles_and_crosses_and_escapes_every_name():
    view = DeclaredView(what="table", name="t_15", kind="verdicts",
                        benchmarks=["dd_write", "hdparm"], title="Table 15 & 100% of #1")
    tex = latex.render(_report([view]))
    assert r"\caption{Table 15 \& 100\% of \#1}" in tex
    assert r"\label{tab:study-t-15}" in tex
    assert r"dd\_write \ensuremath{\cdot} write\_mb\_s & \ensuremath{\times} & " \
           r"\ensuremath{\bigcirc} & \ensuremath{\times} & not run \\" in tex
    assert "○" not in tex and "dd_write" not in tex
    assert tex.index("Table 15") < tex.index("Verdicts: each metric")


def test_markdown_renders_the_declared_table():
    md = markdown.render(_report([T15]))
    assert "## Table 15 & 100% of #1" in md
    assert "| dd_write · write_mb_s | × | ○ | × | not run |" in md


def _bars(fig):
    ax = fig.axes[0]
    return [(round(p.get_width(), 3), p.get_hatch()) for p in ax.patches
            if isinstance(p, Rectangle) and p.get_height() == pytest.approx(figs.BAR)]


def test_the_bars_put_the_papers_ratio_beside_the_measured_one():
    view = DeclaredView(name="t15-bars", kind="bars", benchmarks=["dd_write", "hdparm"])
    (f,) = figs.declared_figures(_report([view]))
    assert f.name == "study-t15-bars"
    bars = _bars(f.figure)
    # KVM on dd: measured 0.91 (solid), published 0.19 (hatched); hdparm 0.89 and 0.953;
    # Xen on dd: published 0.253 only
    assert sorted(bars, key=str) == sorted([(0.91, None), (0.19, figs.HATCH), (0.89, None),
                                            (0.953, figs.HATCH), (0.253, figs.HATCH)], key=str)
    legend = [t.get_text() for t in f.figure.axes[0].get_legend().get_texts()]
    assert legend[:2] == ["measured here", "published (riken-2012)"]


def test_bars_without_published_draw_only_the_measured():
    view = DeclaredView(name="b", kind="bars", benchmarks=["dd_write"], published=False)
    (f,) = figs.declared_figures(_report([view]))
    assert [h for _, h in _bars(f.figure)] == [None]
    legend = [t.get_text() for t in f.figure.axes[0].get_legend().get_texts()]
    assert "published (riken-2012)" not in legend


def test_values_draw_the_trimmed_means_and_the_papers_values():
    view = DeclaredView(name="v", kind="values", benchmarks=["dd_write"],
                        metrics=["write_mb_s"])
    (f,) = figs.declared_figures(_report([view]))
    bars = _bars(f.figure)
    assert sorted(bars, key=str) == sorted([(100.0, None), (788.23, figs.HATCH), (91.0, None),
                                            (149.5, figs.HATCH), (199.69, figs.HATCH)], key=str)


def _instances(report: RunReport, means: list[float], spread: float) -> RunReport:
    env = "qemu:instances=4"
    for i, m in enumerate(means):
        report.results.append(Result(environment=env, benchmark="cyclepi",
                                     metric=f"cycles_i{i}", n=3, samples=[m, m, m],
                                     trimmed_mean=m, metric_id=MetricIdentity(
                                         base="cycles", scope="instance", instance=i)))
    report.results.append(Result(environment=env, benchmark="cyclepi",
                                 metric="cycles_spread_pct", n=3, samples=[spread] * 3,
                                 trimmed_mean=spread,
                                 metric_id=MetricIdentity(base="cycles", scope="spread"),
                                 published=PublishedMatch(value=14, source="slides")))
    return report


def test_the_spread_draws_each_guest_and_the_papers_spread():
    view = DeclaredView(name="pi", kind="spread", benchmarks=["cyclepi"])
    report = _instances(_report([view]), [10.0, 11.0, 12.5, 10.5], 25.0)
    (f,) = figs.declared_figures(report)
    ax = f.figure.axes[0]
    points = [y for line in ax.lines if line.get_marker() == "o" for y in line.get_ydata()]
    assert sorted(points) == [10.0, 10.5, 11.0, 12.5]
    assert ax.get_xticklabels()[0].get_text() == \
        "qemu:instances=4\n(4 guests)\nspread 25.0 %, published 14 %"


def test_a_figure_with_nothing_to_draw_is_left_out_and_the_default_figures_stay():
    views = [DeclaredView(name="pi", kind="spread", benchmarks=["cyclepi"]),
             DeclaredView(name="bars", kind="bars", benchmarks=["hdparm"])]
    from virtbench.results.report.figures import paper
    names = [f.name for f in paper.paper_figures(_report(views))]
    assert "study-bars" in names and "study-pi" not in names
    assert "ratio-hdparm-read_mb_s" in names          # the default figures stay


def test_figures_draw_the_verdict_matrix_too_its_cells_the_tables():
    (f,) = figs.declared_figures(_report([T15]))
    assert f.name == "study-t15"
    table = f.figure.axes[0].tables[0]
    cells = {(r, c): cell.get_text().get_text() for (r, c), cell in table.get_celld().items()}
    assert [cells[(1, c)] for c in range(5)] == ["dd_write · write_mb_s", "×", "○", "×",
                                                 "not run"]
    assert [cells[(0, c)] for c in range(5)] == ["benchmark · metric", "E1\npaper", "E1\nhere",
                                                 "E2\npaper", "E2\nhere"]
    key = f.figure.axes[1].texts[0].get_text()
    assert key.startswith(f"E1: {KVM}\nE2: {XEN}\n○: within ±10 %")


def test_the_wide_terminal_report_prints_the_declared_table_the_compact_one_not():
    from virtbench.results.report.formats.table import render_text
    from virtbench.results.report.view import View
    wide = render_text(_report([T15]), View(wide=True))
    assert "Table 15 & 100% of #1" in wide and "not run" in wide and "○" in wide
    assert "Table 15 & 100% of #1" not in render_text(_report([T15]))


def test_html_renders_the_declared_table_escaped_before_the_verdicts():
    page = html.render(_report([T15]))
    assert "Table 15 &amp; 100% of #1</h2>" in page
    assert "<td>dd_write · write_mb_s</td><td class=\"num\">×</td><td class=\"num\">○</td>" in page
    assert page.index("Table 15 &amp;") < page.index("<h2>Verdicts</h2>")
    assert "±10 %" in page[page.index("Table 15 &amp;"):page.index("<h2>Verdicts</h2>")]
