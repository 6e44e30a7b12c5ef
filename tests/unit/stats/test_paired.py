"""The paired analysis: log ratios of blocks, their interval, the sign-flip test, order."""
from itertools import product
from math import exp, log

import numpy as np
import pytest
from scipy import stats as sps

from virtbench.foundations.stats import paired


def _p_by_hand(d):
    """Every sign pattern, |sum| at least the observed one."""
    obs = abs(sum(d))
    hits = sum(abs(sum(s * x for s, x in zip(signs, d))) >= obs - 1e-12
               for signs in product((1, -1), repeat=len(d)))
    return hits / 2 ** len(d)


def test_log_ratios_keep_only_blocks_both_sides_have_in_block_order():
    lr = paired.log_ratios({3: 2.0, 1: 4.0, 2: 1.0, 7: 5.0}, {1: 2.0, 2: 1.0, 3: 1.0, 9: 1.0})
    assert lr.blocks == (1, 2, 3) and lr.n == 3
    assert lr.d == pytest.approx([log(2), 0.0, log(2)])
    assert paired.geometric_mean_ratio(lr.d) == pytest.approx(2 ** (2 / 3))


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_a_value_without_a_logarithm_names_its_block(bad):
    with pytest.raises(ValueError, match="block 2"):
        paired.log_ratios({1: 1.0, 2: bad}, {1: 1.0, 2: 1.0})


def test_t_interval_is_scipys_one_sample_t_interval():
    d = np.random.default_rng(3).normal(0.04, 0.06, 9)
    ci = sps.ttest_1samp(d, 0.0).confidence_interval(0.9)
    assert paired.log_ci(d, 0.9) == pytest.approx((ci.low, ci.high))
    lo, hi = paired.paired_ratio_ci(d, 0.9)
    assert (lo, hi) == pytest.approx((exp(ci.low), exp(ci.high)))
    assert paired.paired_ratio_ci([0.1], 0.9) == (None, None)
    assert paired.log_ci([0.1, 0.1, 0.1], 0.9) == (pytest.approx(0.1), pytest.approx(0.1))


def test_percentile_bootstrap_of_six_blocks_undercovers_which_is_why_t_is_the_default():
    rng = np.random.default_rng(5)
    runs = 300
    cov = {"t": 0, "percentile": 0}
    for i in range(runs):
        d = rng.normal(0.0, 1.0, 6)
        for method in cov:
            lo, hi = paired.log_ci(d, 0.95, method, seed=i)
            cov[method] += lo < 0 < hi
    assert cov["t"] / runs > 0.92            # nominal 0.95
    assert cov["percentile"] / runs < 0.90   # about 0.85: too narrow at 6 blocks
    lo, hi = paired.log_ci(rng.normal(0, 1, 12), 0.95, "bca")
    assert lo < hi
    with pytest.raises(ValueError, match="CI method"):
        paired.log_ci([1, 2, 3], 0.95, "jackknife")


def test_sign_flip_p_is_exact_and_agrees_with_scipy_and_enumeration():
    rng = np.random.default_rng(11)
    for n in (2, 5, 6, 9):
        d = rng.normal(0.02, 0.05, n)
        ref = sps.permutation_test((d,), np.mean, permutation_type="samples",
                                   n_resamples=np.inf, vectorized=True).pvalue
        assert paired.sign_flip_p(d) == pytest.approx(ref)
        assert paired.sign_flip_p(d) == pytest.approx(_p_by_hand(d))


def test_sign_flip_p_of_many_runs_equals_each_run_alone():
    d = np.random.default_rng(2).normal(0.03, 0.05, (7, 8))
    batch = paired.sign_flip_p(d)
    assert batch == pytest.approx([paired.sign_flip_p(row) for row in d])
    big = np.random.default_rng(2).normal(0.03, 0.05, (3, 20))      # Monte Carlo
    assert paired.sign_flip_p(big, seed=4) == pytest.approx(
        [paired.sign_flip_p(row, seed=4) for row in big])


def test_monte_carlo_sign_flip_p_is_seeded_and_close_to_the_exact_one():
    d = np.random.default_rng(8).normal(0.015, 0.05, 16)    # past EXACT_MAX_BLOCKS
    assert d.size > paired.EXACT_MAX_BLOCKS
    exact = sps.permutation_test((d,), np.mean, permutation_type="samples",
                                 n_resamples=np.inf, vectorized=True).pvalue
    p = paired.sign_flip_p(d, seed=1)
    assert p == paired.sign_flip_p(d, seed=1)
    assert p == pytest.approx(exact, abs=0.015)


def test_smallest_p_and_when_alpha_is_reachable():
    assert paired.sign_flip_p([0.1, 0.2, 0.05, 0.3, 0.15, 0.01]) == pytest.approx(1 / 32)
    assert paired.min_sign_flip_p(6) == pytest.approx(1 / 32)
    assert paired.min_sign_flip_p(5) == pytest.approx(1 / 16) and 1 / 16 > 0.05
    assert paired.sign_flip_p([0.0, 0.0, 0.0]) == 1.0
    assert paired.sign_flip_p([0.1]) is None


def _blocks(n, mu, phi, seed, env_first_share=0.5):
    rng = np.random.default_rng(seed)
    first = rng.random(n) < env_first_share
    d = mu + np.where(first, phi, -phi) + rng.normal(0, 0.01, n)
    env = {b: float(np.exp(x)) for b, x in enumerate(d)}
    ref = {b: 1.0 for b in range(n)}
    return paired.log_ratios(env, ref), {b: bool(f) for b, f in enumerate(first)}


def test_position_effect_is_found_and_removed_from_the_balanced_estimate():
    lr, first = _blocks(30, mu=log(1.05), phi=log(1.03), seed=1, env_first_share=0.7)
    pe = paired.position_effect(lr, first)
    assert pe.first_pct == pytest.approx(3.0, abs=0.6)
    assert pe.p_value < 1e-6
    assert pe.ci_low_pct < pe.first_pct < pe.ci_high_pct
    assert pe.n_env_first + pe.n_ref_first == 30
    # unbalanced order biases the plain estimate; the balanced one is back at 1.05
    assert abs(paired.geometric_mean_ratio(lr.d) - 1.05) > 0.005
    assert pe.balanced_ratio == pytest.approx(1.05, abs=0.005)
    assert "higher when it runs first" in pe.message


def test_no_position_effect_is_not_significant():
    lr, first = _blocks(30, mu=0.0, phi=0.0, seed=2)
    pe = paired.position_effect(lr, first)
    assert pe.p_value > 0.05 and abs(pe.first_pct) < 1.0


def test_position_effect_needs_two_blocks_of_each_order_and_every_blocks_order():
    lr, first = _blocks(5, mu=0.0, phi=0.01, seed=3)
    one_sided = {b: True for b in first}
    pe = paired.position_effect(lr, one_sided)
    assert pe.p_value is None and "not estimable" in pe.message
    with pytest.raises(ValueError, match="ran first"):
        paired.position_effect(lr, {0: True})
