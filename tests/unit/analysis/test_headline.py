"""The headline's figures and words (virtbench/results/analysis/headline.py; the words are
report/words/headline.py's, the change said by report/words/change.py's rule)."""
import math

import pytest

from virtbench.results.analysis import headline as h
from virtbench.results.report.words import change
from virtbench.foundations.model import Result, VsReference


def row(env="guest", bench="himeno", metric="mflops", unit="MFLOPS", higher=True, ratio=0.024,
        lo=0.022, hi=0.026, verdict="fail", needed=None, threshold=10.0, ref="native"):
    return Result(environment=env, benchmark=bench, metric=metric, unit=unit,
                  higher_is_better=higher,
                  vs_baseline=VsReference(ratio=ratio, ratio_ci_low=lo, ratio_ci_high=hi,
                                          verdict=verdict, trials_needed=needed,
                                          threshold_pct=threshold, reference=ref))


def test_a_rate_41_times_lower_is_41_7x_slower_with_its_interval():
    it = h.item(row())
    assert (it.direction, round(it.factor, 1)) == ("slower", 41.7)
    # the interval's ends swap: the lowest ratio is the biggest slowdown
    assert it.factor_low == pytest.approx(1 / 0.026) and it.factor_high == pytest.approx(1 / 0.022)
    assert it.words == "41.7× slower [38.5, 45.5]"


def test_a_time_metric_reads_its_ratio_as_the_slowdown():
    it = h.item(row(bench="pi", metric="seconds", unit="s", higher=False, ratio=17.57,
                    lo=16.0, hi=19.0))
    assert it.words == "17.6× slower [16.0, 19.0]"


def test_faster_near_1_is_said_in_percent_and_beyond_as_a_factor():
    it = h.item(row(unit="MB/s", ratio=1.07, lo=1.05, hi=1.09, verdict="differs, within threshold"))
    assert it.direction == "faster" and round(it.factor, 2) == 1.07
    assert it.words == "7.0 % faster (a real difference, within ±10 %) [-9.0 %, -5.0 %]"
    fast = h.item(row(unit="MB/s", ratio=2.1, lo=2.0, hi=2.2))
    assert fast.words == "2.10× faster [2.00, 2.20]"


def test_a_pass_says_the_band_not_a_factor():
    assert h.item(row(ratio=0.98, lo=0.95, hi=1.01, verdict="pass",
                      threshold=5)).words == "within ±5 %: equivalent"


def test_an_undecided_row_keeps_its_change_and_what_would_decide():
    it = h.item(row(unit="s", higher=False, ratio=1.157, lo=0.86, hi=1.56,
                    verdict="inconclusive", needed=6))
    assert it.words == "15.7 % slower? undecided (≥ 6 blocks would decide) [-14.0 %, +56.0 %]"
    far = h.item(row(unit="s", higher=False, ratio=3.0, lo=0.9, hi=9.0, verdict="inconclusive"))
    assert far.words == "3.00× slower? undecided [0.90, 9.00]"


def test_other_units_are_worse_or_better():
    it = h.item(row(metric="rss_mib", unit="MiB", higher=False, ratio=2.0, lo=1.9, hi=2.1))
    assert it.words == "2.00× worse [1.90, 2.10]"


@pytest.mark.parametrize("ratio", [None, 0.0, -1.0, math.inf])
def test_no_ratio_no_item(ratio):
    r = row()
    r.vs_baseline.ratio = 0.0 if ratio is None else ratio
    assert h.item(r) is None
    assert change.slowdown(ratio, True) is None


def test_the_summary_weighs_each_benchmark_once():
    # stream has four metrics 2x slower, pi one metric 8x slower: sqrt(2 * 8) = 4x, not 2.6x
    rows = [row(bench="stream", metric=m, unit="MB/s", ratio=0.5, lo=0.45, hi=0.55)
            for m in ("copy", "scale", "add", "triad")]
    rows.append(row(bench="pi", metric="seconds", unit="s", higher=False, ratio=8.0, lo=7, hi=9))
    [hl] = h.headlines(rows, ["native", "guest"])
    assert hl.environment == "guest" and hl.reference == "native"
    assert hl.summary.factor == pytest.approx(4.0) and hl.summary.direction == "slower"
    assert (hl.summary.benchmarks, hl.summary.rows, hl.summary.left_out) == (2, 5, 0)
    assert hl.summary.words == "4.00× slower (geometric mean over 2 benchmarks)"


def test_a_faster_and_a_slower_benchmark_balance():
    rows = [row(bench="a", unit="s", higher=False, ratio=2.0, lo=1.9, hi=2.1),
            row(bench="b", unit="s", higher=False, ratio=0.5, lo=0.45, hi=0.55)]
    [hl] = h.headlines(rows, ["guest"])
    assert hl.summary.factor == pytest.approx(1.0)


def test_environments_without_comparisons_have_no_headline_and_rows_without_ratio_are_counted():
    base = Result(environment="native", benchmark="pi", metric="seconds", unit="s")
    lost = row(bench="pi")
    lost.vs_baseline.ratio = 0.0
    hls = h.headlines([base, row(), lost], ["native", "guest"])
    assert [x.environment for x in hls] == ["guest"]
    assert hls[0].summary.left_out == 1 and len(hls[0].items) == 1


def test_a_summary_says_equivalent_when_every_row_passes_and_counts_the_undecided():
    passes = [row(bench=b, ratio=0.97, lo=0.95, hi=0.99, verdict="pass") for b in ("a", "b")]
    [hl] = h.headlines(passes, ["guest"])
    assert hl.summary.words == ("equivalent within ±10 % on every metric of 2 benchmarks "
                                "(geometric mean 3.1 % slower)")
    mixed = passes + [row(bench="c", unit="s", higher=False, ratio=1.3, lo=0.9, hi=1.8,
                          verdict="inconclusive")]
    [hl] = h.headlines(mixed, ["guest"])
    assert hl.summary.words.endswith("; 1 of 3 metrics undecided")
