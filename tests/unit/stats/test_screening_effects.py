"""Effects of a screening's knobs (foundations/stats/screening/effects.py) on synthetic data
built with numpy (seeded): each knob decided, the family's intervals, blocks absorbed, lost
trials, the blocks that would decide, and the recommended configuration."""
from __future__ import annotations

import itertools
from math import log

import numpy as np
import pytest
from scipy import stats as sps

from virtbench.foundations.stats.screening import design as screening
from virtbench.foundations.stats.screening import effects as fx

RATE = fx.EffectQuestion(higher_is_better=True, alpha=0.05, min_effect_pct=5.0)
TIME = fx.EffectQuestion(higher_is_better=False, alpha=0.05, min_effect_pct=5.0)


def _simulate(design, truth: dict[tuple[str, ...], float], sigma: float, blocks: int,
              seed: int, block_shift: float = 0.0) -> list[fx.Observation]:
    """Every configuration once per block: log value = log 100 + the block's shift + the sum
    of each planted term's log effect x its coded product / 2 + normal noise (sigma)."""
    rng = np.random.default_rng(seed)
    index = {k: i for i, k in enumerate(design.knobs)}
    out = []
    for block in range(blocks):
        shift = block_shift * rng.normal()
        for r, row in enumerate(design.rows):
            mean = sum(b * np.prod([row[index[k]] for k in term]) / 2
                       for term, b in truth.items())
            out.append(fx.Observation(r, block, float(np.exp(log(100) + shift + mean
                                                             + sigma * rng.normal()))))
    return out


def _fit(design, observations, question=RATE, interactions=None):
    pairs = design.interactions if interactions is None else interactions
    return {e.term.name: e for e in fx.fit(list(design.rows), design.knobs, observations,
                                           pairs, question)}


def _design(k: int = 3):
    return screening.two_level("abcdefghijkl"[:k])


@pytest.mark.parametrize("planted, question, sign, better", [
    (0.3, RATE, 1, 1), (-0.3, RATE, -1, -1), (0.3, TIME, 1, -1), (-0.3, TIME, -1, 1)])
def test_a_big_effect_matters_with_its_sign_and_better_level(planted, question, sign, better):
    design = _design()
    effects = _fit(design, _simulate(design, {("a",): planted}, 0.02, 3, seed=1), question)
    a = effects["a"]
    assert a.decision == fx.MATTERS
    assert np.sign(a.effect_pct) == sign
    assert a.effect_pct == pytest.approx((np.exp(planted) - 1) * 100, rel=0.05)
    assert a.low_pct < a.effect_pct < a.high_pct
    assert (a.low_pct > 5) if sign > 0 else (a.high_pct < -5)
    assert a.better == better
    assert a.blocks_needed is None and a.blocks == 3


def test_a_null_knob_with_small_noise_and_enough_blocks_has_no_effect():
    design = _design()
    effects = _fit(design, _simulate(design, {("a",): 0.3}, 0.01, 4, seed=2))
    for name in ("b", "c", "a×b", "b×c"):
        e = effects[name]
        assert e.decision == fx.NO_EFFECT, name
        assert -5 < e.low_pct and e.high_pct < 5
        assert e.blocks_needed is None


def test_a_null_knob_with_large_noise_and_few_blocks_is_undecided_with_blocks_needed():
    design = _design()
    effects = _fit(design, _simulate(design, {}, 0.2, 2, seed=3))
    for e in effects.values():
        assert e.decision == fx.UNDECIDED
        assert e.blocks_needed is not None and 2 < e.blocks_needed <= fx.MAX_BLOCKS


def _decided_share(design, b: float, sigma: float, blocks: int, reps: int, seed: int) -> float:
    decided = 0
    for rep in range(reps):
        obs = _simulate(design, {("a",): b}, sigma, blocks, seed=seed + rep)
        decided += _fit(design, obs, interactions=())["a"].decision != fx.UNDECIDED
    return decided / reps


@pytest.mark.parametrize("planted, seed", [(0.12, 6), (0.0, 10)])
def test_blocks_needed_decides_most_of_the_time_at_that_many_blocks(planted, seed):
    """With b and the residual spread held at what the short run estimated, a run of
    blocks_needed blocks decides about 80 % of the time, and one of half as many blocks
    clearly less often (matters for a planted effect, no effect for a null one)."""
    design = _design(2)
    first = _fit(design, _simulate(design, {("a",): planted}, 0.1, 3, seed=seed),
                 interactions=())["a"]
    assert first.decision == fx.UNDECIDED
    n = first.blocks_needed
    assert n is not None and 8 <= n <= 60, n
    residual_sd = first.se * np.sqrt(len(design.rows) * first.blocks) / 2   # se = 2 sd / sqrt(N)
    at_n = _decided_share(design, first.log_effect, residual_sd, n, 100, seed=100)
    at_half = _decided_share(design, first.log_effect, residual_sd, n // 2, 50, seed=200)
    assert 0.65 <= at_n <= 0.92, at_n
    assert at_half < at_n - 0.15, (at_half, at_n)


def test_block_shifts_are_absorbed_by_the_block_indicators():
    design = _design()
    truth = {("a",): 0.2, ("b",): -0.1}
    calm = _fit(design, _simulate(design, truth, 0.02, 4, seed=6))
    # the same noise draws, with a shift of e^(+-1) or so per block on top
    shifted = _fit(design, _shifted(_simulate(design, truth, 0.02, 4, seed=6), [0, 1.0, -0.8, 1.5]))
    for name, e in calm.items():
        assert shifted[name].log_effect == pytest.approx(e.log_effect, abs=1e-9)
        assert shifted[name].se == pytest.approx(e.se, rel=1e-6)
        assert shifted[name].decision == e.decision
    assert calm["a"].decision == calm["b"].decision == fx.MATTERS


def _shifted(observations, shifts):
    return [fx.Observation(o.row, o.block, o.value * np.exp(shifts[o.block]))
            for o in observations]


def test_a_lost_trial_still_fits_and_blocks_are_still_absorbed():
    design = _design()
    truth = {("a",): 0.2}
    obs = _simulate(design, truth, 0.02, 3, seed=7)
    lost = [o for o in obs if not (o.row == 5 and o.block == 1)]
    assert len(lost) == len(obs) - 1
    effects = _fit(design, lost)
    assert effects["a"].decision == fx.MATTERS
    assert effects["a"].log_effect == pytest.approx(0.2, abs=0.03)
    assert effects["a"].df == len(lost) - 1 - 2 - 6
    shifted = _fit(design, _shifted(lost, [0, 2.0, -1.0]))
    for name, e in effects.items():
        assert shifted[name].log_effect == pytest.approx(e.log_effect, abs=1e-9), name


@pytest.mark.parametrize("keep", [0, 6, 7])
def test_too_few_observations_leave_every_term_undecided_without_estimates(keep):
    """A full factorial of 3 knobs in one block has 7 parameters: 7 observations or fewer
    leave no residual degrees of freedom."""
    design = _design()
    obs = _simulate(design, {("a",): 0.3}, 0.01, 1, seed=8)[:keep]
    effects = fx.fit(list(design.rows), design.knobs, obs, design.interactions, RATE)
    assert [e.term.name for e in effects] == ["a", "b", "c", "a×b", "a×c", "b×c"]
    for e in effects:
        assert e.decision == fx.UNDECIDED
        assert (e.log_effect, e.se, e.effect_pct, e.low_pct, e.high_pct) == (None,) * 5
        assert e.better is None and e.blocks_needed is None
        assert e.blocks == (1 if keep else 0)


def test_a_knob_never_at_one_level_cannot_be_estimated():
    design = _design()
    obs = [o for o in _simulate(design, {}, 0.01, 4, seed=9) if design.rows[o.row][0] < 0]
    for e in fx.fit(list(design.rows), design.knobs, obs, (), RATE):
        assert e.decision == fx.UNDECIDED and e.log_effect is None


def test_non_positive_and_non_finite_values_are_ignored():
    design = _design()
    obs = _simulate(design, {("a",): 0.3}, 0.02, 3, seed=10)
    junk = [fx.Observation(0, 0, 0.0), fx.Observation(1, 1, -5.0),
            fx.Observation(2, 2, float("nan")), fx.Observation(3, 0, float("inf"))]
    clean = _fit(design, obs)
    dirty = _fit(design, obs + junk)
    for name, e in clean.items():
        assert dirty[name] == e, name


def test_the_bonferroni_family_widens_the_intervals_with_more_terms():
    """Every interval is the (1 - alpha/m) t interval, m the number of the metric's terms: the
    same data fitted with the interactions (m = 6) has wider main-effect intervals than with
    the main effects alone (m = 3), by the ratio of the two multipliers."""
    design = _design()
    obs = _simulate(design, {("a",): 0.1}, 0.03, 3, seed=11)
    for pairs, m in ((design.interactions, 6), ((), 3)):
        a = _fit(design, obs, interactions=pairs)["a"]
        multiplier = float(sps.t.ppf(1 - 0.05 / (2 * m), a.df))
        assert log(1 + a.high_pct / 100) - a.log_effect == pytest.approx(multiplier * a.se)
        assert a.log_effect - log(1 + a.low_pct / 100) == pytest.approx(multiplier * a.se)
    term = fx.Term(("a",))
    narrow, wide = (fx.decide(term, 0.1, 0.02, 20, m, 3, 8, RATE) for m in (1, 6))
    assert wide.high_pct - wide.low_pct > narrow.high_pct - narrow.low_pct
    # the same estimate: beyond the band alone, not with the family of six
    assert (narrow.decision, wide.decision) == (fx.MATTERS, fx.UNDECIDED)


def test_an_interaction_of_a_full_factorial_is_estimated_and_found():
    design = _design(2)
    truth = {("a",): 0.2, ("b",): 0.1, ("a", "b"): -0.5}
    effects = _fit(design, _simulate(design, truth, 0.02, 4, seed=12))
    ab = effects["a×b"]
    assert ab.decision == fx.MATTERS
    assert ab.log_effect == pytest.approx(-0.5, abs=0.05)


@pytest.mark.parametrize("question, planted, expected", [
    # a rate: without the interaction both knobs would go to +1; a x b = -0.5 favours a != b
    (RATE, -0.5, {"a": 1, "b": -1}),
    # a time: without the interaction both would go to -1; a x b = +0.5 favours a != b
    (TIME, 0.5, {"a": -1, "b": 1})])
def test_recommend_picks_the_combination_the_interaction_favours(question, planted, expected):
    design = _design(2)
    truth = {("a",): 0.2, ("b",): 0.1, ("a", "b"): planted}
    effects = fx.fit(list(design.rows), design.knobs,
                     _simulate(design, truth, 0.02, 4, seed=13), design.interactions, question)
    assert all(e.decision == fx.MATTERS for e in effects)
    assert fx.recommend(effects, design.knobs, question.higher_is_better) == expected


def test_a_knob_that_matters_only_through_an_interaction_is_recommended():
    design = _design()
    truth = {("a",): 0.3, ("a", "c"): 0.4}              # c alone: nothing
    effects = fx.fit(list(design.rows), design.knobs,
                     _simulate(design, truth, 0.02, 4, seed=14), design.interactions, RATE)
    by_name = {e.term.name: e for e in effects}
    assert by_name["c"].decision == fx.NO_EFFECT
    assert by_name["a×c"].decision == fx.MATTERS
    assert fx.recommend(effects, design.knobs, True) == {"a": 1, "c": 1}


@pytest.mark.parametrize("question, expected", [(RATE, {"a": 1, "c": -1}),
                                                (TIME, {"a": -1, "c": 1})])
def test_recommend_leaves_out_knobs_that_do_not_matter(question, expected):
    design = _design(4)
    obs = _simulate(design, {("a",): 0.3, ("c",): -0.2, ("d",): 0.04}, 0.03, 2, seed=15)
    effects = fx.fit(list(design.rows), design.knobs, obs, design.interactions, question)
    decisions = {e.term.name: e.decision for e in effects}
    assert decisions["a"] == decisions["c"] == fx.MATTERS
    assert decisions["b"] == fx.NO_EFFECT and decisions["d"] == fx.UNDECIDED
    assert fx.recommend(effects, design.knobs, question.higher_is_better) == expected


def test_recommend_sets_every_knob_that_matters_however_many():
    design = _design(12)
    planted = {(k,): (0.3 if i % 2 else -0.3) for i, k in enumerate(design.knobs)}
    effects = fx.fit(list(design.rows), design.knobs, _simulate(design, planted, 0.02, 2, seed=16),
                     design.interactions, RATE)
    assert all(e.decision == fx.MATTERS for e in effects)
    assert fx.recommend(effects, design.knobs, True) == {
        k: (1 if i % 2 else -1) for i, k in enumerate(design.knobs)}


def test_recommend_is_empty_when_nothing_matters():
    design = _design()
    effects = fx.fit(list(design.rows), design.knobs, _simulate(design, {}, 0.01, 4, seed=17),
                     design.interactions, RATE)
    assert fx.recommend(effects, design.knobs, True) == {}


def test_the_estimate_is_the_difference_of_mean_logs_and_agrees_with_statsmodels():
    """Balanced, nothing lost: a knob's effect is the mean log at +1 less the mean log at -1,
    and the fit equals statsmodels' formula OLS on +-1 codes with block factors (coefficients
    and standard errors twice the +-1 ones)."""
    import pandas as pd
    import statsmodels.formula.api as smf
    design = _design()
    obs = _simulate(design, {("a",): 0.15, ("b",): -0.07, ("a", "c"): 0.05}, 0.05, 3, seed=18,
                    block_shift=0.3)
    effects = _fit(design, obs)
    frame = pd.DataFrame({"y": [log(o.value) for o in obs], "block": [o.block for o in obs],
                          **{k: [design.rows[o.row][i] for o in obs]
                             for i, k in enumerate(design.knobs)}})
    model = smf.ols("y ~ C(block) + (a + b + c) ** 2", data=frame).fit()
    for knob in design.knobs:
        difference = frame.y[frame[knob] > 0].mean() - frame.y[frame[knob] < 0].mean()
        assert effects[knob].log_effect == pytest.approx(difference, abs=1e-10)
    for name, column in (("a", "a"), ("b", "b"), ("c", "c"), ("a×b", "a:b"), ("a×c", "a:c"),
                         ("b×c", "b:c")):
        assert effects[name].log_effect == pytest.approx(2 * model.params[column], abs=1e-10)
        assert effects[name].se == pytest.approx(2 * model.bse[column], rel=1e-9)
        assert effects[name].df == model.df_resid
        assert effects[name].effect_pct == pytest.approx((np.exp(effects[name].log_effect) - 1)
                                                         * 100)


def test_an_estimate_on_the_band_s_edge_or_out_of_reach_has_no_blocks_needed():
    edge = log(1.05)
    on_edge = fx.decide(fx.Term(("a",)), edge, 0.05, 10, 3, 2, 8, RATE)
    assert on_edge.decision == fx.UNDECIDED and on_edge.blocks_needed is None
    out_of_reach = fx.decide(fx.Term(("a",)), edge * 1.001, 0.05, 10, 3, 2, 8, RATE)
    assert out_of_reach.decision == fx.UNDECIDED and out_of_reach.blocks_needed is None
    within = fx.decide(fx.Term(("a",)), edge * 2, 0.05, 10, 3, 2, 8, RATE)
    assert within.decision == fx.UNDECIDED and within.blocks_needed is not None


def test_every_combination_is_considered_for_the_joined_knobs():
    """Three knobs joined by interactions: the recommendation is the best of the 8
    combinations under the fitted model (checked by brute force here)."""
    design = _design()
    truth = {("a",): 0.1, ("b",): 0.1, ("c",): 0.1, ("a", "b"): -0.3, ("b", "c"): -0.3}
    effects = fx.fit(list(design.rows), design.knobs, _simulate(design, truth, 0.01, 4, seed=19),
                     design.interactions, RATE)
    b = {e.term.knobs: e.log_effect for e in effects if e.decision == fx.MATTERS}

    def model(lv):
        return sum(v * np.prod([lv[k] for k in t]) / 2 for t, v in b.items())
    best = max((dict(zip("abc", c)) for c in itertools.product((-1, 1), repeat=3)), key=model)
    assert fx.recommend(effects, design.knobs, True) == best == {"a": 1, "b": -1, "c": 1}
