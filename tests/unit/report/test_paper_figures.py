"""A paper's figures (virtbench/results/report/figures/paper.py, save.py) from reports built by
hand: the points each figure draws, the ±threshold band on the ratio's log axis, intervals
as error bars, the Okabe-Ito palette, sizes in inches, the metadata each written file
carries (PDF Info, SVG <metadata>, PNG text chunks), file names safe for any label."""
from __future__ import annotations

import io
import re

import pytest

from matplotlib.container import ErrorbarContainer

from virtbench import __version__
from virtbench.core.errors import VirtbenchError
from virtbench.foundations.model import (EnvironmentRecord, Result, RunInfo,
                                         RunReport, TuneEffect, TuneReport, VsReference)
from virtbench.results.report.figures import paper, save

ENVS = ["native", "qemu-tcg/ide/e1000", "kvm"]


def _result(env, bench, ratio=None, low=None, high=None, samples=(1.0, 2.0, 3.0)):
    vs = None if ratio is None else VsReference(ratio=ratio, ratio_ci_low=low,
                                                ratio_ci_high=high)
    mean = sum(samples) / len(samples)
    return Result(environment=env, benchmark=bench, metric="seconds", unit="s",
                  higher_is_better=False, samples=list(samples),
                  trials=[2 * i + 1 for i in range(len(samples))], trimmed_mean=mean,
                  ci_low=mean - 0.5, ci_high=mean + 0.25, vs_baseline=vs)


def report(tune: TuneReport | None = None, metadata: dict | None = None) -> RunReport:
    """native (the reference) and two guests on pi[k=17]; stream has no reference."""
    return RunReport(
        run=RunInfo(id="run-42", threshold_pct=5, virtbench_version=__version__),
        environments=[EnvironmentRecord(label=ENVS[0], metadata=metadata or {"cpu": "x86"}),
                      EnvironmentRecord(label=ENVS[1]), EnvironmentRecord(label=ENVS[2])],
        results=[_result(ENVS[0], "pi[k=17]"),
                 _result(ENVS[1], "pi[k=17]", 2.0, 1.6, 2.5, samples=(4.0, 4.5, 5.0, 3.5)),
                 _result(ENVS[2], "pi[k=17]", 1.02, 0.99, 1.04),
                 _result(ENVS[0], "stream", samples=(7.0, 8.0))],
        tune=tune)


def by_name(figs) -> dict:
    return {f.name: f.figure for f in figs}


def bars(ax) -> list[ErrorbarContainer]:
    return [c for c in ax.containers if isinstance(c, ErrorbarContainer)]


def extent(container: ErrorbarContainer) -> tuple[float, float, float]:
    """(point x, whisker low, whisker high) of a horizontal error bar of one point."""
    line, _, (segments,) = container.lines
    (x0, _), (x1, _) = segments.get_segments()[0]
    return float(line.get_xdata()[0]), min(x0, x1), max(x0, x1)


# -- the figures -----------------------------------------------------------------------------

def test_each_benchmark_and_metric_gets_its_figures_and_a_ratio_only_with_a_reference():
    names = [f.name for f in paper.paper_figures(report())]
    assert names == ["ratio-pi[k=17]-seconds", "values-pi[k=17]-seconds",
                     "samples-pi[k=17]-seconds", "values-stream-seconds",
                     "samples-stream-seconds"]


def test_the_ratio_is_on_a_log_axis_with_the_threshold_band_and_each_interval():
    ax = by_name(paper.paper_figures(report()))["ratio-pi[k=17]-seconds"].axes[0]
    assert ax.get_xscale() == "log"
    got = [extent(c) for c in bars(ax)]            # one point per guest, the reference none
    assert got == [pytest.approx((2.0, 1.6, 2.5)), pytest.approx((1.02, 0.99, 1.04))]
    (band,) = ax.patches
    assert band.get_x() == pytest.approx(0.95)
    assert band.get_x() + band.get_width() == pytest.approx(1.05)
    assert [t.get_text() for t in ax.get_yticklabels()] == ENVS[1:]
    lo, hi = ax.get_xlim()
    assert lo < 0.95 and hi > 2.5                  # every whisker and the band in view
    ticks = [t for t in ax.get_xticks() if lo <= t <= hi]
    assert [ax.xaxis.get_major_formatter()(t) for t in ticks] == ["1", "1.2", "1.5", "2"]


def test_the_band_follows_the_runs_threshold():
    rep = report()
    rep.run.threshold_pct = 20
    ax = by_name(paper.paper_figures(rep))["ratio-pi[k=17]-seconds"].axes[0]
    (band,) = ax.patches
    assert (band.get_x(), band.get_x() + band.get_width()) == pytest.approx((0.8, 1.2))


def test_values_draw_every_environment_with_its_interval():
    ax = by_name(paper.paper_figures(report()))["values-pi[k=17]-seconds"].axes[0]
    got = [extent(c) for c in bars(ax)]
    assert got == [pytest.approx((2.0, 1.5, 2.25)), pytest.approx((4.25, 3.75, 4.5)),
                   pytest.approx((2.0, 1.5, 2.25))]


def test_an_environment_without_a_sample_has_no_value_and_a_metric_without_any_no_figure():
    rep = report()
    rep.results.append(Result(environment="kvm", benchmark="stream", metric="seconds"))
    rep.results.append(Result(environment="kvm", benchmark="stream", metric="ops"))
    figs = by_name(paper.paper_figures(rep))
    ax = figs["values-stream-seconds"].axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["native"]
    assert not any(name.endswith("-stream-ops") for name in figs)


def test_samples_draw_every_sample_at_its_trial():
    ax = by_name(paper.paper_figures(report()))["samples-pi[k=17]-seconds"].axes[0]
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines] == ENVS
    assert sum(len(ln.get_xdata()) for ln in lines) == 3 + 4 + 3
    assert list(lines[1].get_xdata()) == [1, 3, 5, 7]
    assert list(lines[1].get_ydata()) == [4.0, 4.5, 5.0, 3.5]


def test_the_palette_is_okabe_ito_and_an_environment_keeps_its_colour():
    figs = by_name(paper.paper_figures(report()))
    ratio = [c.lines[0].get_color() for c in bars(figs["ratio-pi[k=17]-seconds"].axes[0])]
    values = [c.lines[0].get_color() for c in bars(figs["values-pi[k=17]-seconds"].axes[0])]
    samples = [ln.get_color() for ln in figs["samples-pi[k=17]-seconds"].axes[0].get_lines()]
    assert values == samples == list(paper.OKABE_ITO[:3])
    assert ratio == values[1:]
    assert len(set(values)) == 3


@pytest.mark.parametrize("width, inches", [("single", 3.5), ("double", 7.16)])
def test_sizes_are_a_column_or_two(width, inches):
    for f in paper.paper_figures(report(), width):
        assert f.figure.get_size_inches()[0] == pytest.approx(inches)


def test_an_unknown_width_is_refused():
    with pytest.raises(ValueError, match="single or double"):
        paper.paper_figures(report(), "triple")


def _tune() -> TuneReport:
    e = dict(benchmark="pi[k=17]", metric="seconds", blocks=4)
    return TuneReport(min_effect_pct=5, knobs=[
        TuneEffect(knob="cpus", levels=["1", "2"], effect_pct=-30, low_pct=-35, high_pct=-25,
                   decision="matters", **e),
        TuneEffect(knob="mem", levels=["256M", "1G"], effect_pct=1, low_pct=-2, high_pct=3,
                   decision="no effect", **e),
        TuneEffect(knob="net", levels=["e1000", "virtio"], **e)],
        interactions=[TuneEffect(knob="cpus×mem", effect_pct=4, low_pct=-9, high_pct=17,
                                 decision="undecided", **e)])


def test_a_tunes_effects_with_their_band_intervals_and_decisions():
    ax = by_name(paper.paper_figures(report(_tune())))["tune-pi[k=17]-seconds"].axes[0]
    got = [extent(c) for c in bars(ax)]
    assert got == [pytest.approx(x) for x in ((-30, -35, -25), (1, -2, 3), (4, -9, 17))]
    markers = [c.lines[0].get_marker() for c in bars(ax)]
    assert markers == ["o", "s", "D"]
    (band,) = ax.patches
    assert band.get_x() == pytest.approx(100 / 1.05 - 100)      # -4.76 %: as decided
    assert band.get_x() + band.get_width() == pytest.approx(5)
    assert [t.get_text() for t in ax.texts] == [" not estimated"]
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "cpus 1→2", "mem 256M→1G", "net e1000→virtio", "cpus×mem mixed→alike"]


# -- the files -------------------------------------------------------------------------------

def _file(rep, fmt, kind="ratio-pi[k=17]-seconds") -> bytes:
    fig = next(f for f in paper.paper_figures(rep) if f.name == kind)
    return save.render(fig, fmt, rep)


def _pdf_info(data: bytes, key: str) -> str:
    m = re.search(rb"/" + key.encode() + rb" \((.*?)(?<!\\)\)", data)
    assert m, f"no /{key} in the PDF"
    return m.group(1).replace(b"\\(", b"(").replace(b"\\)", b")").decode()


def test_a_pdf_carries_the_run_the_version_and_the_fingerprint_with_fonts_embedded():
    rep = report(metadata={"cpu": "x86", "digest": "abc123def4567890"})
    data = _file(rep, "pdf")
    assert _pdf_info(data, "Title") == "ratio-pi[k=17]-seconds"
    assert _pdf_info(data, "Subject") == (f"virtbench run run-42; virtbench {__version__}; "
                                          "fingerprint abc123def4567890 (native)")
    assert b"/FontFile2" in data and b"/Type3" not in data       # TrueType (fonttype 42)
    assert b"/CreationDate" not in data


def test_an_svg_carries_them_in_its_metadata():
    data = _file(report(), "svg").decode()
    meta = re.search(r"<metadata>(.*?)</metadata>", data, re.S).group(1)
    digest = save.fingerprint_digest(report())
    assert "<dc:title>ratio-pi[k=17]-seconds</dc:title>" in meta
    assert f"virtbench run run-42; virtbench {__version__}; fingerprint {digest}" in meta
    assert "<dc:identifier>run-42</dc:identifier>" in meta


def test_a_png_carries_them_as_text_chunks():
    from PIL import Image
    text = Image.open(io.BytesIO(_file(report(), "png"))).text
    assert text["Title"] == "ratio-pi[k=17]-seconds"
    assert "virtbench run run-42" in text["Description"]
    assert text["Software"] == f"virtbench {__version__}"


def test_the_same_report_gives_the_same_bytes():
    assert _file(report(), "pdf") == _file(report(), "pdf")
    assert _file(report(), "svg") == _file(report(), "svg")


def test_the_fingerprint_digest_is_the_first_environments():
    assert save.fingerprint_digest(report(metadata={"digest": "d1"})) == "d1"
    a, b = (save.fingerprint_digest(report(metadata={"cpu": c})) for c in ("x86", "arm"))
    assert re.fullmatch(r"[0-9a-f]{16}", a) and a != b
    assert save.fingerprint_digest(RunReport()) is None
    assert "fingerprint" not in save.description(RunReport())


@pytest.mark.parametrize("label, stem", [
    ("qemu-tcg/ide/e1000", "qemu-tcg_ide_e1000"), ("pi[k=17]", "pi_k_17"),
    ("../../etc/passwd", "_.._etc_passwd"), (".hidden", "hidden"), ("-rf", "rf"),
    ("", "figure"), ("a b\nc", "a_b_c"), ("x" * 300, "x" * save.NAME_MAX)])
def test_file_names_are_safe_for_any_label(label, stem):
    assert save.safe_name(label) == stem


def test_names_that_meet_get_a_number_case_folded():
    assert save.file_names(["a/b", "a_b", "A b", "c"], "pdf") == [
        "a_b.pdf", "a_b-2.pdf", "A_b-3.pdf", "c.pdf"]


def test_rendered_is_every_figure_in_every_format():
    rep = report()
    files = save.rendered(paper.paper_figures(rep), ["svg", "pdf"], rep)
    assert [n for n, _ in files] == [
        f"{k}.{fmt}" for fmt in ("svg", "pdf") for k in (
            "ratio-pi_k_17_-seconds", "values-pi_k_17_-seconds", "samples-pi_k_17_-seconds",
            "values-stream-seconds", "samples-stream-seconds")]
    assert all(d.startswith(b"%PDF") for n, d in files if n.endswith(".pdf"))


@pytest.mark.parametrize("text, asked", [("pdf", ["pdf"]), ("PDF, svg,png,pdf", ["pdf", "svg", "png"])])
def test_formats(text, asked):
    assert save.formats(text) == asked


@pytest.mark.parametrize("text", ["eps", "pdf,jpg", "", ","])
def test_a_bad_format_is_one_line(text):
    with pytest.raises(VirtbenchError, match="give one or more of pdf,svg,png"):
        save.formats(text)


def test_a_legend_of_long_labels_goes_under_the_axes_in_columns_that_fit():
    import warnings
    long = ["qemu-tcg/virtio-blk/virtio-net", "qemu-tcg/ide/virtio-net", "native"]
    rows = [_result(env, "dd-write") for env in long]
    fig = paper.samples_figure(rows, "dd-write: write_mb_s", {e: "#000000" for e in long},
                               "single")
    with warnings.catch_warnings():
        warnings.simplefilter("error")                # "axes sizes collapsed to zero"
        save.render(paper.PaperFigure("samples", fig), "pdf", report())
    (legend,) = fig.legends
    assert legend._ncols == 1 and fig.axes[0].get_legend() is None
    short = paper.samples_figure([_result(e, "b") for e in ENVS], "b", paper.colours(report()),
                                 "double")
    assert short.legends[0]._ncols == 3
