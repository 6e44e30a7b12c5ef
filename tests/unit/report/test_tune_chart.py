"""A tune run's effects chart (virtbench/results/report/figures/tunechart.py) and the HTML
report's Tune section, on a report built by hand: pi's seconds with a knob that matters,
one with no effect and an undecided interaction; stream's triad with no estimate at all."""
from __future__ import annotations

import json
import re
from html import escape

import pytest

from virtbench.foundations.model import Result, RunReport
from virtbench.foundations.model.headline import Headline, HeadlineSummary
from virtbench.foundations.model.tune import (TuneConfiguration, TuneDesign, TuneEffect,
                                              TuneReport)
from virtbench.results.report import render
from virtbench.results.report.figures import tunechart
from virtbench.results.report.formats import html
from virtbench.results.report.fmt.tune import design_summary
from virtbench.results.report.words.tune import knob_words

MIN_EFFECT = 7.5
HEADLINE = "recommended: cpus=2: 1.38× faster on pi [1.31, 1.45], confirmed"


def _effect(knob, levels, bench, metric, effect, low, high, decision, **more):
    return TuneEffect(knob=knob, levels=levels, benchmark=bench, metric=metric,
                      effect_pct=effect, low_pct=low, high_pct=high, decision=decision,
                      blocks=4, **more)


CPUS = _effect("cpus", ["0.5", "2"], "pi", "seconds", -30.0, -35.0, -24.0, "matters",
               better_level="2")
MEM = _effect("mem", ["1G", "4G"], "pi", "seconds", 1.0, -2.0, 3.5, "no effect")
CPUS_MEM = _effect("cpus×mem", [], "pi", "seconds", 4.0, -3.0, 11.0, "undecided",
                   blocks_needed=12)
TRIAD = _effect("cpus", ["0.5", "2"], "stream", "triad_mb_s", None, None, None, "undecided")


def _tune(**more) -> TuneReport:
    design = TuneDesign(kind="full factorial", full_factorial=4, base="qemu:cpus=1,mem=2G",
                        configurations=[TuneConfiguration(name=f"c{i}",
                                                          levels={"cpus": c, "mem": m})
                                        for i, (c, m) in enumerate(
                                            [("0.5", "1G"), ("2", "1G"), ("0.5", "4G"),
                                             ("2", "4G")], 1)])
    fields = dict(min_effect_pct=MIN_EFFECT, design=design, knobs=[CPUS, MEM, TRIAD],
                  interactions=[CPUS_MEM], recommended={"cpus": "2"}, headline=HEADLINE)
    return TuneReport(**{**fields, **more})


def _report(tune: TuneReport | None = None) -> RunReport:
    rows = [Result(environment="c1", benchmark="pi", metric="seconds", unit="s",
                   higher_is_better=False),
            Result(environment="c1", benchmark="stream", metric="triad_mb_s", unit="MB/s")]
    headline = [Headline(environment="c1", reference="base",
                         summary=HeadlineSummary(words="1.20× slower"))]
    return RunReport(results=rows, headline=headline, tune=tune)


def _pi_figure() -> dict:
    return tunechart.metric_figures(_report(_tune()))[0]


def _trace(fig: dict, name: str) -> dict:
    (found,) = [t for t in fig["data"] if t["name"] == name]
    return found


def test_one_figure_per_metric_in_the_tunes_order():
    figs = tunechart.metric_figures(_report(_tune()))
    assert [f["layout"]["title"]["text"].split(":")[0] for f in figs] == \
        ["pi · seconds", "stream · triad_mb_s"]


def test_a_run_that_is_not_a_tune_has_no_effects_chart():
    assert len(tunechart.metric_figures(_report(_tune()))) == 2
    assert tunechart.metric_figures(_report(None)) == []


def test_a_point_per_knob_and_interaction_at_its_effect_labelled_with_its_levels():
    fig = _pi_figure()
    points = {y: x for t in fig["data"] for x, y in zip(t["x"], t["y"])}
    assert points == {"cpus 0.5→2": -30.0, "mem 1G→4G": 1.0, "cpus×mem mixed→alike": 4.0}
    # the knobs first, then the interaction, top to bottom
    assert fig["layout"]["yaxis"]["categoryarray"] == \
        ["cpus 0.5→2", "mem 1G→4G", "cpus×mem mixed→alike"]
    assert fig["layout"]["yaxis"]["autorange"] == "reversed"


def test_the_interval_is_an_asymmetric_error_bar():
    fig = _pi_figure()
    for effect in (CPUS, MEM, CPUS_MEM):
        t = _trace(fig, effect.decision)
        err = t["error_x"]
        assert err["symmetric"] is False
        i = t["x"].index(effect.effect_pct)
        assert t["x"][i] + err["array"][i] == pytest.approx(effect.high_pct)
        assert t["x"][i] - err["arrayminus"][i] == pytest.approx(effect.low_pct)
    assert _trace(fig, "matters")["error_x"]["array"] == [pytest.approx(6.0)]
    assert _trace(fig, "matters")["error_x"]["arrayminus"] == [pytest.approx(5.0)]


def test_the_band_is_plus_minus_the_min_effect_and_in_view():
    fig = _pi_figure()
    (band,) = [s for s in fig["layout"]["shapes"] if s["type"] == "rect"]
    # ±7.5 % of the ratio, as the decision reads it (±ln 1.075 on the log scale): from
    # 1/1.075 - 1 = -6.98 % to +7.5 %
    assert band["x0"] == pytest.approx(-6.9767, abs=1e-3)
    assert band["x1"] == pytest.approx(MIN_EFFECT)
    assert band["yref"] == "paper" and (band["y0"], band["y1"]) == (0, 1)
    assert any(f"±{MIN_EFFECT:g} %" in a["text"] and "no effect" in a["text"]
               for a in fig["layout"]["annotations"])
    low, high = fig["layout"]["xaxis"]["range"]
    assert low == -high and high > 35.0        # cpus' whisker reaches -35 %


def test_the_band_follows_the_tunes_min_effect():
    fig = tunechart.metric_figures(_report(_tune(min_effect_pct=2)))[0]
    (band,) = [s for s in fig["layout"]["shapes"] if s["type"] == "rect"]
    assert (band["x0"], band["x1"]) == (pytest.approx(100 / 1.02 - 100), pytest.approx(2))


def test_colour_marker_and_hover_say_the_decision():
    fig = _pi_figure()
    styles = set()
    for effect in (CPUS, MEM, CPUS_MEM):
        t = _trace(fig, effect.decision)
        styles.add((t["marker"]["color"], t["marker"]["symbol"]))
        (hover,) = [h for h, y in zip(t["hovertext"], t["y"]) if y.startswith(effect.knob + " ")]
        assert f"decision: {effect.decision}" in hover
        assert escape(knob_words(effect, MIN_EFFECT, "s", False)) in hover
    assert len(styles) == 3                         # each decision its own look
    hover = _trace(fig, "undecided")["hovertext"][0]
    assert "&gt;= 12 blocks would decide" in hover and "mixed levels to alike: +4.0 %" in hover
    assert "2 is " in _trace(fig, "matters")["hovertext"][0]     # cpus=2 is … faster


def test_the_axis_says_the_metrics_unit_and_direction():
    fig = _pi_figure()
    title = fig["layout"]["xaxis"]["title"]["text"]
    assert "s, lower is better" in title and "first level to the second" in title
    triad = tunechart.metric_figures(_report(_tune()))[1]
    assert "MB/s, higher is better" in triad["layout"]["xaxis"]["title"]["text"]


def test_a_metric_with_no_estimate_is_drawn_as_text_not_left_out():
    triad = tunechart.metric_figures(_report(_tune()))[1]
    (only,) = triad["data"]
    assert only["mode"] == "text" and only["text"] == ["not estimated"]
    assert only["y"] == ["cpus 0.5→2"] and only["x"] == [0.0]
    assert "decision: undecided" in only["hovertext"][0]


def test_an_effect_not_estimated_beside_estimated_ones_keeps_its_row():
    knobs = [CPUS, MEM.model_copy(update={"effect_pct": None, "low_pct": None,
                                          "high_pct": None, "decision": "undecided"})]
    fig = tunechart.metric_figures(_report(_tune(knobs=knobs, interactions=[])))[0]
    assert fig["layout"]["yaxis"]["categoryarray"] == ["cpus 0.5→2", "mem 1G→4G"]
    text = _trace(fig, "not estimated")
    assert text["y"] == ["mem 1G→4G"] and text["text"] == ["not estimated"]
    assert [t["name"] for t in fig["data"]] == ["matters", "not estimated"]


def _specs(page: str) -> list[dict]:
    """The chart specs the page's last script draws."""
    found = re.search(r"var specs=(\[.*?\]);specs\.forEach", page, re.S)
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_html_shows_the_tune_before_the_headline_with_its_charts():
    page = render(_report(_tune()), "html")
    section = page.index('<section class="tune">')
    assert section < page.index('<section class="headline">')
    assert "<h2>Tune</h2>" in page and HEADLINE in page
    for line in design_summary(_tune().design):
        assert line in page
    assert page.count('data-metric="effects"') == 2
    drawn = [s["fig"] for s in _specs(page)]
    titles = [f["layout"]["title"]["text"] for f in drawn]
    assert any(t.startswith("pi · seconds") for t in titles)
    assert any(t.startswith("stream · triad_mb_s") for t in titles)


def test_html_says_the_trade_off_and_the_note():
    page = render(_report(_tune(trade_off="triad_mb_s of stream recommends the base",
                                note="the recommended configuration has not run")), "html")
    assert "trade-off: triad_mb_s of stream recommends the base" in page
    assert "note: the recommended configuration has not run" in page


def test_html_quiet_keeps_the_tune_headline_and_draws_no_chart():
    page = html.render(_report(_tune()), "quiet")
    assert HEADLINE in page and 'data-metric="effects"' not in page


def test_html_of_a_run_that_is_not_a_tune_has_no_tune_section():
    with_tune = render(_report(_tune()), "html")
    without = render(_report(None), "html")
    assert '<section class="tune">' in with_tune
    assert '<section class="tune">' not in without and "<h2>Tune</h2>" not in without
    assert 'data-metric="effects"' not in without
    assert "not estimated" not in without


def test_html_lists_the_refinements_tries():
    from virtbench.foundations.model.tune import TuneStep
    step = TuneStep(knob="cpus", level="1", environment="r1", reference="r0",
                    levels={"cpus": "1"}, moved=None)
    page = render(_report(_tune(refinement=[step])), "html")
    assert "refine: cpus=1 (r1) against r0: not run yet" in page
