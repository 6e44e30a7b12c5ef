"""Verdicts that know their power: inconclusive when the samples cannot decide."""
import numpy as np
import pytest

from virtbench.foundations import stats


def _noisy(mean, n, seed, cv=0.02):
    return list(np.random.default_rng(seed).normal(mean, mean * cv, n))


def test_three_a_side_twice_as_slow_is_inconclusive_with_trials_needed():
    c = stats.compare(_noisy(50, 3, 1), _noisy(100, 3, 2), higher_is_better=True)
    assert c.overhead_pct == pytest.approx(50, abs=5)
    assert c.verdict == "inconclusive"
    assert c.trials_needed == 5                   # alpha 0.05 is reachable from 5 a side
    assert "5 trials per side" in c.message and "0.2" in c.message


def test_a_huge_noisy_slowdown_asks_for_the_trials_that_would_show_it():
    # the sandbox run: pi 17.9x slower in a TCG guest with a CV of 71 %. Sized for a 10 %
    # change at that CV it asked for 483 trials; sized for the smallest overhead its CI
    # allows (+772 %) it asks for the 5 a side from which alpha 0.05 is reachable at all
    guest, native = [0.924270, 1.152388, 3.186145], [0.059995, 0.064396, 0.106016]
    c = stats.compare(guest, native, higher_is_better=False)
    assert c.overhead_pct == pytest.approx(1689.5, abs=0.1) and c.ci_low > 700
    assert c.verdict == "inconclusive" and c.direction == "worse"
    assert c.trials_needed == 5
    # a slowdown whose CI reaches zero is sized at the threshold, as before
    flat = stats.compare(_noisy(100, 3, 9, cv=0.3), _noisy(85, 3, 10, cv=0.3), False)
    assert flat.ci_low < 0 < flat.ci_high and flat.trials_needed > 20


def test_twelve_a_side_twice_as_slow_fails_and_says_worse():
    c = stats.compare(_noisy(50, 12, 1), _noisy(100, 12, 2), higher_is_better=True)
    assert c.verdict == "fail" and c.direction == "worse" and c.trials_needed is None


def test_fewer_retransmits_than_native_is_a_fail_in_the_better_direction():
    # lower is better: a guest with half the retransmits is outside ±10 %, but better
    c = stats.compare(_noisy(5, 12, 3), _noisy(10, 12, 4), higher_is_better=False)
    assert c.verdict == "fail" and c.direction == "better" and c.overhead_pct < 0
    assert "better than" in c.message


def test_within_threshold_needs_power_to_pass():
    quiet = stats.compare(_noisy(98, 12, 5, cv=0.01), _noisy(100, 12, 6, cv=0.01), True)
    assert quiet.verdict == "pass" and quiet.direction is None and quiet.power >= 0.8
    noisy = stats.compare(_noisy(98, 6, 5, cv=0.3), _noisy(100, 6, 6, cv=0.3), True)
    assert noisy.verdict == "inconclusive" and noisy.trials_needed > 6


def test_compare_verdict_twelve_vs_three():
    a12, b12 = _noisy(100, 12, 7), _noisy(200, 12, 8)
    p12 = stats.permutation_p_value(b12, a12)
    v = stats.compare_verdict(100.0, p12, 12, 12, 0.02, alpha=0.01)
    assert v.verdict == "worse"
    p3 = stats.permutation_p_value(b12[:3], a12[:3])
    v3 = stats.compare_verdict(100.0, p3, 3, 3, 0.02, alpha=0.01)
    assert v3.verdict == "inconclusive" and v3.trials_needed == 6


def test_compare_same_needs_power():
    v = stats.compare_verdict(1.0, 0.5, 12, 12, 0.005, alpha=0.01, min_change_pct=5)
    assert v.verdict == "same" and v.power >= 0.8
    v = stats.compare_verdict(1.0, 0.5, 6, 6, 0.2, alpha=0.01, min_change_pct=5)
    assert v.verdict == "inconclusive" and v.trials_needed > 6
