"""The geometry of the ratio charts (virtbench/results/report/logscale.py): a log axis centred on 1."""
from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from virtbench.results.report import logscale

ratios = st.floats(min_value=1e-4, max_value=1e4, allow_nan=False)


def test_position_is_log10_and_one_is_the_centre():
    assert logscale.position(1.0) == 0.0
    assert logscale.position(100.0) == pytest.approx(2.0)
    assert logscale.position(0.1) == pytest.approx(-1.0)
    for bad in (0.0, -2.0, math.inf, math.nan):
        with pytest.raises(ValueError):
            logscale.position(bad)


@given(ratios)
def test_worse_and_better_by_the_same_factor_are_as_far_from_one(x):
    assert logscale.position(x) == pytest.approx(-logscale.position(1.0 / x), abs=1e-9)


def test_fraction_across_the_axis():
    half = logscale.position(100.0)
    assert logscale.fraction(1.0, half) == 0.5
    assert logscale.fraction(100.0, half) == pytest.approx(1.0)
    assert logscale.fraction(0.01, half) == pytest.approx(0.0)
    assert logscale.fraction(10.0, half) == pytest.approx(0.75)
    assert logscale.fraction(1e6, half) == 1.0            # clipped at the edge


def test_18x_and_41x_do_not_look_alike():
    """The issue's case: as overheads (% of the reference lost) 18× and 41× are 94.5 % and
    97.6 %; on the log axis 41× sits well beyond 18×."""
    half = logscale.half_width([41.7, 18.2])
    a, b = logscale.fraction(18.2, half), logscale.fraction(41.7, half)
    overhead_gap = ((1 - 1 / 41.7) - (1 - 1 / 18.2))        # 3 % of a 0..100 % axis
    assert b - a > 2 * overhead_gap
    assert (b - 0.5) / (a - 0.5) == pytest.approx(math.log(41.7) / math.log(18.2))


def test_band_is_the_threshold_on_the_ratio():
    assert logscale.band(10) == pytest.approx((0.9, 1.1))
    assert logscale.band(5) == pytest.approx((0.95, 1.05))
    for bad in (0, -5, 100, 150):
        with pytest.raises(ValueError):
            logscale.band(bad)


def test_half_width_holds_the_data_the_band_and_room_for_labels():
    half = logscale.half_width([41.7, 0.5], 10)
    assert half == pytest.approx(logscale.position(41.7) / (1 - logscale.LABEL_ROOM))
    # the better side counts as far as the worse: 1/50 reaches as far as 50
    assert logscale.half_width([0.02]) == pytest.approx(logscale.half_width([50.0]))
    # a tiny difference still gets the narrowest axis, wider than the band
    assert logscale.half_width([1.01], 10) == logscale.MIN_HALF_WIDTH
    assert logscale.half_width([1.01], 40) > logscale.position(1.4)
    # values that cannot sit on a log axis are left out, not fatal
    assert logscale.half_width([None, 0.0, math.inf, 2.0]) == logscale.half_width([2.0])


@given(st.lists(ratios, min_size=1, max_size=8), st.floats(min_value=0.5, max_value=60))
def test_every_value_and_band_edge_fits_inside_the_axis(values, threshold):
    half = logscale.half_width(values, threshold)
    for v in values + list(logscale.band(threshold)):
        assert abs(logscale.position(v)) <= half * (1 - logscale.LABEL_ROOM) + 1e-9


@pytest.mark.parametrize("edge, expected", [
    (150.0, [1 / 100, 1 / 10, 1 / 2, 1, 2, 10, 100]),
    (8.0, [1 / 5, 1 / 2, 1, 2, 5]),
    (2.5, [1 / 2, 1 / 1.5, 1 / 1.25, 1, 1.25, 1.5, 2]),
    (1.3, [1 / 1.25, 1 / 1.1, 1 / 1.05, 1, 1.05, 1.1, 1.25]),
    (1500.0, [1 / 1000, 1 / 100, 1 / 10, 1 / 2, 1, 2, 10, 100, 1000]),
])
def test_ticks_as_the_range_needs(edge, expected):
    half = logscale.position(edge)
    got = logscale.ticks(half)
    assert got == pytest.approx(expected)
    assert all(abs(logscale.position(t)) <= half + 1e-9 for t in got)


def test_a_41x_guest_gets_the_decades():
    assert logscale.ticks(logscale.half_width([41.7], 10)) == pytest.approx(
        [1 / 100, 1 / 10, 1 / 2, 1, 2, 10, 100])


@given(st.floats(min_value=0.01, max_value=5))
def test_ticks_are_symmetric_and_include_one(half):
    got = logscale.ticks(half)
    assert 1.0 in got and got == sorted(got)
    assert [1 / t for t in reversed(got)] == pytest.approx(got)
    assert len(got) >= 3 or half < logscale.position(1.05)


def test_tick_text():
    assert [logscale.tick_text(t) for t in (0.01, 0.1, 0.5, 1, 2, 10, 100)] == [
        "1/100", "1/10", "1/2", "1", "2", "10", "100"]
    assert logscale.tick_text(1 / 1.25) == "1/1.25"
    assert logscale.tick_text(1.25) == "1.25"


def test_bar_runs_from_one_to_the_slowdown():
    assert logscale.bar_span(41.7) == pytest.approx((1.0, 40.7))
    base, length = logscale.bar_span(0.5)
    assert base + length == pytest.approx(0.5) and length < 0
    with pytest.raises(ValueError):
        logscale.bar_span(0.0)


def test_whisker_around_the_slowdown():
    assert logscale.whisker(41.7, 38.1, 45.0) == pytest.approx((3.6, 3.3))
    # ends turned over (a higher-is-better ratio's interval as slowdowns)
    assert logscale.whisker(41.7, 45.0, 38.1) == pytest.approx((3.6, 3.3))
    assert logscale.whisker(2.0, None, 3.0) == (0.0, 0.0)


def test_label_sits_beyond_the_far_end_on_the_bar_side():
    assert logscale.label_anchor(41.7, 38.1, 45.0) == (pytest.approx(math.log10(45.0)), "left")
    assert logscale.label_anchor(0.5, 0.4, 0.6) == (pytest.approx(math.log10(0.4)), "right")
    # an interval that crosses 1: the label still goes on the bar's side, past the whisker
    assert logscale.label_anchor(1.4, 0.65, 3.1) == (pytest.approx(math.log10(3.1)), "left")
    assert logscale.label_anchor(2.0, None, None) == (pytest.approx(math.log10(2.0)), "left")
