"""A claim's relation read with the decisions' statistics: one-sided t bounds of the blocks'
log ratios, blocks needed, the unpaired fallback, equivalence, Holm over the claims."""
from math import log

import numpy as np
import pytest
from scipy import stats as sps

from virtbench.core.decisions import ClaimStatus
from virtbench.foundations.stats import claims as sc


def _blocks(ratio, sd, n, seed):
    d = log(ratio) + np.random.default_rng(seed).normal(0, sd, n)
    return {b: float(np.exp(x)) for b, x in enumerate(d)}, {b: 1.0 for b in range(n)}


def test_a_ratio_well_above_the_bound_holds_well_below_does_not():
    env, ref = _blocks(3.4, 0.05, 6, 1)
    r = sc.ratio_relation(env, ref, sc.AT_LEAST, 1.5)
    assert r.status == ClaimStatus.HOLDS and r.ci_low > 1.5 and r.blocks == 6
    assert r.analysis == "paired"
    assert r.p_value < 0.001 and r.blocks_needed is None
    env, ref = _blocks(1.2, 0.05, 6, 2)
    r = sc.ratio_relation(env, ref, sc.AT_LEAST, 1.5)
    assert r.status == ClaimStatus.NOT_HOLDS and r.ci_high < 1.5
    # "at most": the mirror
    assert sc.ratio_relation(env, ref, sc.AT_MOST, 1.5).status == ClaimStatus.HOLDS


@pytest.mark.parametrize("ratio", [1.3, 1.45, 1.5, 1.55, 1.7])
def test_the_status_is_read_off_the_one_sided_t_bound(ratio):
    for seed in range(30):
        env, ref = _blocks(ratio, 0.1, 8, seed)
        r = sc.ratio_relation(env, ref, sc.AT_LEAST, 1.5)
        d = np.log([env[b] / ref[b] for b in range(8)])
        lo, hi = sps.t.interval(0.9, 7, loc=d.mean(), scale=d.std(ddof=1) / np.sqrt(8))
        expect = (ClaimStatus.HOLDS if lo > log(1.5) else
                  ClaimStatus.NOT_HOLDS if hi < log(1.5) else ClaimStatus.INCONCLUSIVE)
        assert r.status == expect
        assert (r.ci_low, r.ci_high) == pytest.approx((np.exp(lo), np.exp(hi)))


def test_blocks_needed_decide_about_four_times_in_five():
    env, ref = _blocks(1.62, 0.15, 5, 3)
    r = sc.ratio_relation(env, ref, sc.AT_LEAST, 1.5)
    assert r.status == ClaimStatus.INCONCLUSIVE and r.blocks_needed is not None
    n = r.blocks_needed
    m = np.mean([np.log(env[b]) for b in range(5)])
    s = np.std([np.log(env[b]) for b in range(5)], ddof=1)
    rng = np.random.default_rng(4)
    d = m + rng.normal(0, s, (2000, n))
    lo = d.mean(1) - sps.t.ppf(0.95, n - 1) * d.std(1, ddof=1) / np.sqrt(n)
    assert 0.7 < np.mean(lo > log(1.5)) < 0.92


def test_unpaired_claims_use_the_bootstrap_of_trimmed_means():
    rng = np.random.default_rng(5)
    a, b = 3.0 * (1 + rng.normal(0, 0.03, 12)), 1 + rng.normal(0, 0.03, 12)
    r = sc.ratio_relation_unpaired(a, b, sc.AT_LEAST, 1.5)
    assert r.status == ClaimStatus.HOLDS and r.analysis == "unpaired"
    assert r.estimate == pytest.approx(3, 0.05)
    zero = sc.ratio_relation_unpaired([0, 0, 0], [1, 2, 3], sc.AT_LEAST, 1.5)
    assert zero.status == ClaimStatus.INCONCLUSIVE and zero.estimate is None and zero.ci_low is None


def test_equivalence_claims_are_the_band_claim():
    env, ref = _blocks(1.01, 0.01, 10, 6)
    assert sc.within_relation(env, ref, 5, True).status == ClaimStatus.HOLDS
    env, ref = _blocks(1.5, 0.01, 10, 6)
    r = sc.within_relation(env, ref, 5, True)
    assert r.status == ClaimStatus.NOT_HOLDS and r.p_value < 0.05


def test_holm_over_the_claims_takes_back_what_does_not_survive():
    weak = [sc.ratio_relation(*_blocks(1.62, 0.08, 6, s), sc.AT_LEAST, 1.5) for s in (15, 18)]
    strong = sc.ratio_relation(*_blocks(3.0, 0.05, 6, 8), sc.AT_LEAST, 1.5)
    assert all(w.status == ClaimStatus.HOLDS and 0.04 < w.p_value < 0.05 for w in weak)
    out = sc.adjust_claims([*weak, strong])
    for r in out[:2]:
        assert r.status == ClaimStatus.INCONCLUSIVE and r.claims == 3
        assert r.held_before_holm == ClaimStatus.HOLDS
    assert out[2].status == ClaimStatus.HOLDS and out[2].p_holm == pytest.approx(3 * strong.p_value)
