"""Changes in a series of runs (virtbench/foundations/stats/changes.py): the noise model, the test at a
fact change, the drift search, the two-runs rule, the family's correction."""
from math import exp, log, sqrt

import numpy as np
import pytest

from virtbench.foundations.stats import changes


def noisy(n: int, level: float = 100.0, sd: float = 0.01, seed: int = 0) -> np.ndarray:
    return level * np.exp(sd * np.random.default_rng(seed).standard_normal(n))


def settled(values, facts=(), hib=True, **kw) -> changes.SeriesChanges:
    return changes.settle([changes.detect(values, list(facts), hib, **kw)])[0]


def by_status(s: changes.SeriesChanges, status: str) -> list[changes.Change]:
    return [c for c in s.changes if c.status == status]


def test_noise_is_the_robust_scale_of_successive_differences():
    y = np.log(noisy(2000, sd=0.02, seed=1))
    assert changes.noise_sigma(y) == pytest.approx(0.02, rel=0.08)
    stepped = np.r_[y[:1000], y[1000:] + log(1.3)]    # a 30 % step moves one difference
    assert changes.noise_sigma(stepped) == pytest.approx(changes.noise_sigma(y), rel=0.02)
    assert changes.noise_sigma(y[:2]) is None
    assert changes.noise_sigma(np.zeros(10)) == changes.SIGMA_FLOOR


@pytest.mark.parametrize("seed", range(5))
def test_an_aa_series_shows_no_confirmed_change(seed):
    s = settled(noisy(20, seed=seed))
    assert by_status(s, changes.CONFIRMED) == []
    assert s.noise.floor_pct == pytest.approx((exp(s.noise.sigma) - 1) * 100)


def test_a_step_at_a_fact_change_is_confirmed_with_its_size_and_side():
    values = np.r_[noisy(10, seed=2), noisy(3, level=85.0, seed=3)]
    s = settled(values, facts=[10])
    [c] = s.changes
    assert (c.index, c.kind, c.status, c.direction) == (10, changes.FACT, changes.CONFIRMED,
                                                         "worse")
    assert (c.runs_before, c.runs_after) == (10, 3)
    assert c.decision.estimate == pytest.approx(0.85, abs=0.02)
    assert c.decision.decision == "fail"            # beyond the ±10 % band
    assert c.decision.p_holm < 0.05
    # the same step on a lower-is-better metric is an improvement
    assert settled(values, facts=[10], hib=False).changes[0].direction == "better"


def test_one_run_after_a_fact_change_is_suspected_not_confirmed():
    values = np.r_[noisy(10, seed=4), [80.0]]
    [c] = settled(values, facts=[10]).changes
    assert c.status == changes.SUSPECTED and c.runs_after == 1
    assert "one more run" in c.reason


def test_a_single_spike_is_never_a_change():
    base = noisy(14, seed=5)
    spiked = base.copy()
    spiked[10] *= 0.7
    # at a fact change: the run after the spike is back, so it is not confirmed
    at_fact = settled(spiked, facts=[10])
    assert by_status(at_fact, changes.CONFIRMED) == []
    assert at_fact.changes[0].status == changes.UNDECIDED
    # without a fact change: the search confirms nothing either
    assert by_status(settled(spiked), changes.CONFIRMED) == []


def test_a_fact_change_that_changed_nothing_is_no_change():
    values = np.r_[noisy(10, sd=0.005, seed=6), noisy(4, sd=0.005, seed=7)]
    [c] = settled(values, facts=[10]).changes
    assert c.status == changes.NO_CHANGE and c.direction is None


def test_drift_without_a_fact_change_is_found_by_the_search():
    values = np.r_[noisy(12, seed=8), noisy(4, level=90.0, seed=9)]
    s = settled(values)
    [c] = by_status(s, changes.CONFIRMED)
    assert c.kind == changes.DRIFT and c.index == 12 and c.direction == "worse"
    assert c.decision.p_value is None               # the search chose the point: no p
    assert c.decision.estimate == pytest.approx(0.9, abs=0.02)


def test_the_last_run_alone_is_suspected():
    values = np.r_[noisy(12, seed=10), [70.0]]
    s = settled(values)
    assert by_status(s, changes.CONFIRMED) == []
    [c] = by_status(s, changes.SUSPECTED)
    assert (c.index, c.kind, c.runs_after) == (12, changes.DRIFT, 1)


def test_a_value_of_zero_leaves_the_series_without_detection():
    s = changes.detect([1.0, 2.0, 0.0, 1.0], [2], True)
    assert s.no_log == changes.NoLog(2, 0.0) and s.changes == ()


def test_the_family_correction_is_holm_over_every_fact_point():
    moved = changes.detect(np.r_[noisy(6, seed=11), noisy(3, level=96.0, seed=12)], [6], True)
    nulls = [changes.detect(noisy(9, seed=20 + i), [6], True) for i in range(5)]
    family = changes.settle([moved, *nulls])
    raw = [s.changes[0].decision.p_value for s in family]
    ranked = sorted(raw)
    first = family[0].changes[0].decision
    # Holm: the smallest p times the family's size, made monotone
    assert first.p_holm == pytest.approx(min(1.0, ranked[0] * 6)) if raw[0] == ranked[0] \
        else first.p_holm >= raw[0]
    alone = changes.settle([moved])[0].changes[0].decision
    assert alone.p_holm == pytest.approx(alone.p_value)
    assert first.p_holm >= alone.p_holm


def test_the_smallest_change_shrinks_with_runs_and_grows_with_noise():
    a = changes.mde_fact_pct(5, 0.02)
    assert changes.mde_fact_pct(20, 0.02) < a < changes.mde_fact_pct(5, 0.04)
    assert changes.mde_drift_pct(20, 0.02) == pytest.approx(
        (exp(sqrt(changes.penalty(20, 0.02) * 22 / 40)) - 1) * 100)
    assert changes.mde_fact_pct(0, 0.02) is None and changes.mde_drift_pct(2, 0.02) is None
