"""The HTML report's ratio chart (virtbench/results/report/ratios.py) on a run filled by hand: a TCG
guest 41.7× slower than native, a KVM guest within the band."""
from __future__ import annotations

import json
import math

import pytest
from reportkit import BATTERY, ENVIRONMENTS, fill_store, study_dict

from virtbench.results import analysis
from virtbench.results.report.words.change import sentence, slowdown
from virtbench.results.report import logscale, ratios, render
from virtbench.foundations.store import Store

TCG = ("qemu-tcg/ide/e1000", "qemu", "qemu:accel=tcg,disk=ide,nic=e1000", 1 / 41.7,
       ENVIRONMENTS[2][4])
ENVS = [ENVIRONMENTS[0], ENVIRONMENTS[1], TCG]


@pytest.fixture
def slow_run(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = fill_store(store, study_dict(), envs=ENVS)
    return analysis.analyze_run(store, run_id)


def _figure(report, bench):
    rows = [r for r in report.results if r.benchmark == bench]
    return rows, ratios.ratio_figure(rows, report.run.baseline, bench, report.run.threshold_pct)


def test_one_bar_per_comparison_from_one_to_the_slowdown(slow_run):
    rows, fig = _figure(slow_run, "himeno")
    bars = fig["data"][0]
    assert bars["y"] == ["mflops · qemu-kvm/virtio-blk/virtio-net", "mflops · qemu-tcg/ide/e1000"]
    assert bars["base"] == [1.0, 1.0]
    ends = [b + x for b, x in zip(bars["base"], bars["x"])]
    # himeno's MFLOPS are higher-is-better: the slow guest's ratio is ~1/41.7, its bar ~41.7
    assert ends[1] == pytest.approx(41.7, rel=0.05)
    assert ends[0] == pytest.approx(1 / 0.95, rel=0.05)
    assert fig["layout"]["xaxis"]["type"] == "log"


def test_worse_is_on_the_right_whatever_the_metric_direction(slow_run):
    """MFLOPS (higher is better) and seconds (lower is better) of the same slow guest both
    sit right of 1."""
    for bench in ("himeno", "pi"):
        rows, fig = _figure(slow_run, bench)
        bars = fig["data"][0]
        tcg = bars["y"].index(next(y for y in bars["y"] if "tcg" in y))
        assert bars["x"][tcg] > 0 and bars["base"][tcg] + bars["x"][tcg] > 30


def test_labels_are_the_change_as_every_format_says_it(slow_run):
    rows, fig = _figure(slow_run, "pi")
    r = next(r for r in rows if r.environment == TCG[0])
    words = sentence(r.vs_baseline.ratio, r.higher_is_better, r.unit)
    assert words.endswith("× slower")
    assert float(words.split("×")[0]) == pytest.approx(41.7, rel=0.05)
    notes = [a["text"] for a in fig["layout"]["annotations"]]
    assert words in notes
    label = next(a for a in fig["layout"]["annotations"] if a["text"] == words)
    assert label["xanchor"] == "left"      # beyond the bar's end, on the worse side
    slow, low, high, _ = ratios.bar_text(r, r.vs_baseline)
    assert label["x"] == pytest.approx(math.log10(max(slow, high)))


def test_axis_centred_on_one_with_the_band_and_decade_ticks(slow_run):
    _, fig = _figure(slow_run, "himeno")
    axis = fig["layout"]["xaxis"]
    lo, hi = axis["range"]
    assert lo == pytest.approx(-hi) and hi > math.log10(41.7)
    assert axis["tickvals"] == pytest.approx([1 / 100, 1 / 10, 1 / 2, 1, 2, 10, 100])
    assert axis["ticktext"] == ["1/100", "1/10", "1/2", "1", "2", "10", "100"]
    band = fig["layout"]["shapes"][0]
    assert (band["type"], band["x0"], band["x1"]) == ("rect", pytest.approx(0.9),
                                                      pytest.approx(1.1))
    one = fig["layout"]["shapes"][1]
    assert one["x0"] == one["x1"] == 1
    assert "1 = native" in axis["title"]["text"]


def test_whiskers_are_the_interval_as_slowdowns(slow_run):
    rows, fig = _figure(slow_run, "himeno")
    bars = fig["data"][0]
    r = next(r for r in rows if r.environment == TCG[0])
    vs = r.vs_baseline
    ends = sorted(1 / x for x in (vs.ratio_ci_low, vs.ratio_ci_high))
    i = bars["y"].index(f"mflops · {TCG[0]}")
    slow = bars["base"][i] + bars["x"][i]
    assert slow - bars["error_x"]["arrayminus"][i] == pytest.approx(ends[0])
    assert slow + bars["error_x"]["array"][i] == pytest.approx(ends[1])
    assert ends[0] < slow < ends[1]


def test_colours_follow_the_verdicts(slow_run):
    rows, fig = _figure(slow_run, "stream")
    by_label = dict(zip(fig["data"][0]["y"], fig["data"][0]["marker"]["color"]))
    for r in rows:
        if r.vs_baseline is not None:
            assert by_label[f"{r.metric} · {r.environment}"] == ratios.bar_color(
                r.vs_baseline.verdict)
    assert ratios.bar_color("fail") != ratios.bar_color("pass")


def test_no_comparison_no_chart(slow_run):
    native = [r for r in slow_run.results if r.environment == "native"]
    assert ratios.ratio_figure(native, "native", "x", 10) is None
    assert ratios.comparisons(native, "native") == []


def test_html_has_one_ratio_chart_per_benchmark_and_the_headline_first(slow_run):
    page = render(slow_run, "html")
    benches = {b[0] for b in BATTERY}
    assert page.count('data-metric="ratios"') == len(benches)
    # every metric here has a comparison: no value chart left
    assert page.count('class="chart"') == len(benches)
    head = page.index('<section class="headline">')
    assert head < page.index("<h2>Verdicts</h2>") < page.index('class="chart"')
    for h in slow_run.headline:
        assert h.summary.words in page[head:page.index("</section>")]
        for item in h.items:
            assert item.words in page
    specs = json.loads(page[page.index("var specs=") + 10:page.index(";specs.forEach")]
                       .replace("<\\/", "</"))
    assert all(s["fig"]["layout"]["xaxis"]["type"] == "log" for s in specs)


def test_overhead_as_a_slowdown_either_direction():
    # a time 25 % longer is 1.25× slower; a rate that lost 20 % is 1.25× slower too
    assert ratios.overhead_slowdown(25.0, False) == pytest.approx(1.25)
    assert ratios.overhead_slowdown(20.0, True) == pytest.approx(1.25)
    assert ratios.overhead_slowdown(-50.0, False) == pytest.approx(0.5)
    # the saturation the issue names: 94.5 % and 97.6 % of a rate lost are 18× and 41×
    assert ratios.overhead_slowdown(94.5, True) == pytest.approx(18.2, rel=0.01)
    assert ratios.overhead_slowdown(97.6, True) == pytest.approx(41.7, rel=0.01)
    assert ratios.overhead_slowdown(100.0, True) is None
    assert ratios.overhead_slowdown(None, True) is None


def test_compare_chart_puts_run_a_at_one(slow_run, tmp_path):
    from virtbench.foundations.model import CompareRow
    rows = [CompareRow(environment="g", benchmark="stream", metric="copy", unit="MB/s",
                       higher_is_better=True, a=100.0, b=50.0, ratio=0.5, change_pct=50.0,
                       ci_low=40.0, ci_high=60.0, verdict="worse"),
            CompareRow(environment="g", benchmark="pi", metric="seconds", unit="s",
                       higher_is_better=False, a=2.0, b=1.0, ratio=0.5, change_pct=-50.0,
                       ci_low=-55.0, ci_high=-45.0, verdict="better"),
            CompareRow(environment="g", benchmark="x", metric="n", unit="", a=0.0, b=1.0)]
    fig = ratios.compare_figure(rows, "t", 5.0)
    bars = fig["data"][0]
    assert len(bars["y"]) == 2                      # A's 0 has no ratio: not drawn
    ends = [b + x for b, x in zip(bars["base"], bars["x"])]
    assert ends == pytest.approx([2.0, 0.5])        # 2× slower, 2× faster
    assert bars["error_x"]["arrayminus"][0] == pytest.approx(2.0 - 1 / 0.6)
    assert bars["error_x"]["array"][0] == pytest.approx(2.5 - 2.0)
    assert [a["text"] for a in fig["layout"]["annotations"][:2]] == ["2.00× slower",
                                                                     "2.00× faster"]
    assert fig["layout"]["shapes"][0]["x0"] == pytest.approx(0.95)
    assert ratios.compare_figure(rows[2:], "t", 5.0) is None


def test_labels_are_shown_escaped(slow_run):
    rows, _ = _figure(slow_run, "pi")
    r = next(r for r in rows if r.environment == TCG[0]).model_copy(
        update={"environment": "<b>x</b>"})
    fig = ratios.ratio_figure([r], "native", "t", 10)
    assert fig["layout"]["yaxis"]["ticktext"] == ["seconds · &lt;b&gt;x&lt;/b&gt;"]
    assert "<b>" not in fig["data"][0]["hovertext"][0]
