"""Run B against run A (stats/change.py): a compare verdict that knows its power, and the
ratio of trimmed means it reads (stats/ratio.py)."""
import numpy as np
import pytest

from virtbench.core.decisions import CompareVerdict, Direction
from virtbench.foundations import stats
from virtbench.foundations.stats.change import ChangeBasis


def _noisy(mean, n, seed, cv=0.02):
    return list(np.random.default_rng(seed).normal(mean, mean * cv, n))


def test_compare_verdict_twelve_vs_three():
    a12, b12 = _noisy(100, 12, 7), _noisy(200, 12, 8)
    p12 = stats.permutation_p_value(b12, a12)
    v = stats.change_verdict(100.0, p12, 12, 12, 0.02, alpha=0.01)
    assert v.verdict == CompareVerdict.WORSE and v.direction == Direction.WORSE
    assert v.basis == ChangeBasis.BEYOND
    p3 = stats.permutation_p_value(b12[:3], a12[:3])
    v3 = stats.change_verdict(100.0, p3, 3, 3, 0.02, alpha=0.01)
    assert v3.verdict == CompareVerdict.INCONCLUSIVE and v3.trials_needed == 6
    assert v3.basis == ChangeBasis.COUNTS_UNREACHABLE and v3.smallest_p == pytest.approx(0.2)


def test_compare_same_needs_power():
    v = stats.change_verdict(1.0, 0.5, 12, 12, 0.005, alpha=0.01, min_change_pct=5)
    assert v.verdict == CompareVerdict.SAME and v.power >= 0.8
    assert v.basis == ChangeBasis.POWERED
    v = stats.change_verdict(1.0, 0.5, 6, 6, 0.2, alpha=0.01, min_change_pct=5)
    assert v.verdict == CompareVerdict.INCONCLUSIVE and v.trials_needed > 6
    assert v.basis == ChangeBasis.NOT_SIGNIFICANT
    assert stats.overhead_pct(1.25, higher_is_better=False) == pytest.approx(25.0)
    assert stats.overhead_pct(1.1, higher_is_better=True) == pytest.approx(-10.0)
    assert stats.overhead_pct(0.9, higher_is_better=False) == pytest.approx(-10.0)


def test_change_verdict_needs_significance_and_size():
    assert stats.change_verdict(7.0, 0.001).verdict == CompareVerdict.WORSE
    assert stats.change_verdict(-7.0, 0.001).verdict == CompareVerdict.BETTER
    small = stats.change_verdict(3.0, 0.001)           # significant but small
    assert small.verdict == CompareVerdict.SAME and small.basis == ChangeBasis.WITHIN
    # large but not significant, power unknown: it cannot say "same"
    assert stats.change_verdict(20.0, 0.05).verdict == CompareVerdict.INCONCLUSIVE
    none = stats.change_verdict(20.0, None)
    assert none.verdict == CompareVerdict.INCONCLUSIVE and none.basis == ChangeBasis.NO_TEST


def test_trimmed_ratio_hand_computed_ratio_and_exact_permutation_p():
    # trimmed means (medians at n = 3) 9 and 11 -> ratio 9/11, 18.2 % slower
    c = stats.trimmed_ratio([8, 9, 10], [10, 11, 12], higher_is_better=True)
    assert c.ratio == pytest.approx(9 / 11)
    assert c.overhead_pct == pytest.approx((1 - 9 / 11) * 100)
    # 20 ways to split {8,9,10,10,11,12} in two; 2 give a difference of trimmed means
    # <= -2, 2 give >= +2: two-sided p = 4/20
    assert c.p_value == pytest.approx(0.2)
    assert c.ci_low <= c.overhead_pct <= c.ci_high
    assert c.ratio_ci_low <= c.ratio <= c.ratio_ci_high


def test_trimmed_ratio_of_a_zero_baseline_is_refused():
    with pytest.raises(ValueError, match="baseline is zero"):
        stats.trimmed_ratio([1.0, 2.0], [0.0, 0.0, 0.0], True)
