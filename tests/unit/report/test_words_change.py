"""How a change is said (report/words/change.py): one rule, each case of its specification."""
import math

import pytest

from virtbench.results.report.words import change


def test_near_1_a_change_is_its_overhead_in_percent():
    # a time 15.8 % longer; a throughput 6 % higher: overhead -6 %
    assert change.cell(1.158, False, "s") == "+15.8 %"
    assert change.sentence(1.158, False, "s") == "15.8 % slower"
    assert change.cell(1.06, True, "MB/s") == "-6.0 %"
    assert change.sentence(1.06, True, "MB/s") == "6.0 % faster"


def test_from_1_5x_either_way_a_change_is_a_factor():
    # the row: a throughput at 1/37.5 of the reference's is +97.3 % overhead
    assert change.cell(1 / 37.5, True, "MB/s") == "37.5× slower"
    assert change.sentence(1 / 37.5, True, "MB/s") == "37.5× slower"
    assert change.cell(1 / 2.1, False, "s") == "2.10× faster"
    assert change.cell(123.4, False, "s") == "123× slower"
    assert change.cell(17.57, False, "s") == "17.6× slower"


def test_the_edge_is_1_5x_of_the_slowdown_on_both_sides():
    # a time: the ratio is the slowdown
    assert change.cell(1.5, False, "s") == "1.50× slower"
    assert change.cell(1.499, False, "s") == "+49.9 %"
    assert change.cell(1 / 1.5, False, "s") == "1.50× faster"
    assert change.cell(1 / 1.499, False, "s") == "-33.3 %"
    # a throughput: its inverse; a third less throughput is 1.5× slower
    assert change.cell(1 / 1.5, True, "MB/s") == "1.50× slower"
    assert change.cell(0.67, True, "MB/s") == "+33.0 %"
    assert change.cell(1.5, True, "MB/s") == "1.50× faster"
    assert change.cell(1.49, True, "MB/s") == "-49.0 %"


def test_time_and_rate_are_slower_or_faster_anything_else_worse_or_better():
    assert change.cell(3.0, False, "ms") == "3.00× slower"
    assert change.cell(1 / 3, True, "IOPS") == "3.00× slower"
    assert change.cell(2.0, False, "MiB") == "2.00× worse"
    assert change.sentence(0.9, False, "MiB") == "10.0 % better"
    assert change.sentence(0.9, False, "retransmits") == "10.0 % better"


@pytest.mark.parametrize("ratio", [None, 0.0, -1.0, math.inf, math.nan])
def test_no_ratio_says_the_overhead_when_known_else_n_a(ratio):
    assert change.cell(ratio, True, "s") == "n/a"
    assert change.sentence(ratio, True, "s") == "n/a"
    assert change.cell(ratio, True, "s", overhead=12.5) == "+12.5 %"
    assert change.sentence(ratio, False, "s", overhead=-3.0) == "3.0 % faster"
    assert change.cell(ratio, True, "s", overhead=math.nan) == "n/a"


def test_a_sentence_names_what_it_is_against_and_a_zero_change():
    assert change.sentence(1.2, False, "s", than="native") == "20.0 % slower than native"
    assert change.sentence(3.0, False, "s", than="native") == "3.00× slower than native"
    assert change.sentence(1.0004, False, "s") == "the same to 0.1 %"
    assert change.sentence(1.0004, False, "s", than="native") == "the same as native to 0.1 %"


def test_an_interval_is_said_in_its_points_form():
    near = change.said(1.1, False, "s")
    assert near.interval(1.05, 1.2, False) == "[+5.0, +20.0]"
    assert near.interval(1.2, 1.05, False, sentence=True) == "[+5.0 %, +20.0 %]"
    # a factor's interval in the point's direction, low first: a throughput's ends swap
    far = change.said(1 / 41.7, True, "MB/s")
    assert far.interval(0.022, 0.026, True) == "[38.5, 45.5]"
    fast = change.said(1 / 2.1, False, "s")
    assert fast.interval(0.4, 0.5, False) == "[2.00, 2.50]"
    assert far.interval(None, 0.026, True) == "" and near.interval(0.0, 1.2, False) == ""


def test_an_interval_of_a_comparison_is_its_ratios_else_its_overheads():
    class Row:       # a CompareRow: only the overhead's interval
        ci_low, ci_high = 5.0, 20.0
    assert change.ratio_interval(Row(), False) == pytest.approx((1.05, 1.2))
    assert change.ratio_interval(Row(), True) == pytest.approx((0.95, 0.8))


def test_a_slowdown_of_no_metric_is_read_as_a_time():
    assert change.said_slowdown(1.47, "s").sentence() == "47.0 % slower"
    assert change.said_slowdown(1 / 1.02, "").sentence() == "2.0 % better"
    assert change.said_slowdown(4.0, "s").sentence() == "4.00× slower"


@pytest.mark.parametrize("x,text", [(1.0666, "1.07"), (9.996, "10.0"), (99.96, "100"),
                                    (17.57, "17.6"), (41.66, "41.7"), (123.4, "123")])
def test_factors_keep_three_significant_digits(x, text):
    assert change.factor(x) == text
