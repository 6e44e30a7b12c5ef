"""The test on the headline statistic: what it can reach, its power, the trials it needs."""
from itertools import combinations

import numpy as np
import pytest

from virtbench.foundations import stats
from virtbench.foundations.stats import significance as sig


def _exact_p_by_hand(a, b):
    """Every split of the pooled samples, difference of trimmed means, two-sided."""
    pooled = list(a) + list(b)
    obs = stats.trimmed_mean(a) - stats.trimmed_mean(b)
    lo = hi = total = 0
    for idx in combinations(range(len(pooled)), len(a)):
        x = [pooled[i] for i in idx]
        y = [pooled[i] for i in range(len(pooled)) if i not in idx]
        d = stats.trimmed_mean(x) - stats.trimmed_mean(y)
        lo += d <= obs + 1e-12
        hi += d >= obs - 1e-12
        total += 1
    return min(1.0, 2 * min(lo, hi) / total)


def test_p_value_tests_the_trimmed_mean_not_the_plain_mean():
    # one wild sample in B moves its mean a lot but its trimmed mean not at all
    a = [10.0, 10.2, 9.9, 10.1, 10.05]
    b = [10.0, 10.2, 9.9, 10.1, 1000.0]
    assert stats.trimmed_mean(a) == pytest.approx(stats.trimmed_mean(b) - 0.0, abs=0.06)
    p = stats.permutation_p_value(a, b)
    assert p == pytest.approx(_exact_p_by_hand(a, b))
    assert p > 0.5          # a test of plain means would call this (mean 10 vs 208) a change


def test_smallest_p_three_a_side_is_point_two_and_matches_enumeration():
    assert sig.min_p_value(3, 3) == pytest.approx(0.2)
    assert _exact_p_by_hand([1, 2, 3], [101, 102, 103]) == pytest.approx(0.2)
    assert sig.min_p_value(5, 5) == pytest.approx(4 / 252)
    assert _exact_p_by_hand([1, 2.5, 3, 4.2, 5], [101, 102, 103.3, 104, 105]) == pytest.approx(4 / 252)
    assert sig.min_p_value(2, 5) == pytest.approx(2 / 21)   # plain mean on the 2 side
    assert sig.min_p_value(1, 5) is None


def test_trials_needed_to_reach_alpha():
    assert sig.trials_to_reach(0.05) == 5
    assert sig.trials_to_reach(0.01) == 6
    assert not sig.can_reach(3, 3, 0.05) and sig.can_reach(5, 5, 0.05)


def test_power_grows_with_trials_and_shrinks_with_noise():
    low = sig.power(6, 6, 0.05, 0.05, 0.05)
    high = sig.power(30, 30, 0.05, 0.05, 0.05)
    assert 0 < low < 0.8 < high <= 1
    assert sig.power(30, 30, 0.20, 0.05, 0.05) < high
    assert sig.power(3, 3, 0.001, 0.5, 0.05) == 0.0          # out of reach: no power at all
    n = sig.trials_for_power(0.05, 0.05, 0.05)
    assert sig.power(n, n, 0.05, 0.05, 0.05) >= 0.8 > sig.power(n - 1, n - 1, 0.05, 0.05, 0.05)
    assert sig.trials_for_power(0.0, 0.05, 0.05) == 5


def test_monte_carlo_p_is_seeded_and_reproducible():
    r = np.random.default_rng(1)
    a, b = r.normal(100, 3, 12), r.normal(102, 3, 12)
    assert not sig.is_exact(12, 12)
    assert stats.permutation_p_value(a, b, seed=5) == stats.permutation_p_value(a, b, seed=5)
    assert stats.permutation_p_value(a, b, seed=5) != stats.permutation_p_value(a, b, seed=6)
