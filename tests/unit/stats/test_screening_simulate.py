"""stats/screening/simulate.py: simulated screenings decided by effects.fit and recommend, on
tiny seeded runs (bench/tune_simulation.py runs the big ones)."""
from math import log

import numpy as np
import pytest

from virtbench.foundations.stats.screening import effects as fx
from virtbench.foundations.stats.screening import simulate as ss
from virtbench.foundations.stats.simulate import NoiseModel

QUIET = NoiseModel(cv=0.02)
RATE = fx.EffectQuestion(True, 0.05, 5.0)
TIME = fx.EffectQuestion(False, 0.05, 5.0)


def test_a_huge_effect_is_found_and_its_better_level_recommended_at_no_loss():
    truth = ss.ScreeningTruth((50.0, 0.0, 0.0, 0.0), QUIET, 3, RATE)
    out = ss.simulate(truth, 20, seed=1)
    assert out.share(fx.MATTERS, [0]) == 1.0
    assert out.share(fx.MATTERS, [1, 2, 3]) == 0.0
    assert (out.recommended[:, 0] == 1).all()          # its second level: 50 % higher
    assert (out.recommended[:, 1:] == -1).all()        # the rest keep the base's level
    assert out.loss_pct == pytest.approx(np.zeros(20), abs=1e-9)
    assert (out.configurations, out.full_factorial) == (8, 16)


def test_a_time_takes_the_level_that_lowers_it():
    faster = ss.ScreeningTruth((-40.0, 0.0, 0.0, 0.0), QUIET, 3, TIME)
    out = ss.simulate(faster, 10, seed=2)
    assert out.share(fx.MATTERS, [0]) == 1.0 and (out.recommended[:, 0] == 1).all()
    assert out.loss_pct == pytest.approx(np.zeros(10), abs=1e-9)
    slower = ss.ScreeningTruth((40.0, 0.0, 0.0, 0.0), QUIET, 3, TIME)
    out = ss.simulate(slower, 10, seed=3)
    assert out.share(fx.MATTERS, [0]) == 1.0 and (out.recommended[:, 0] == -1).all()


def test_null_knobs_are_not_found_to_matter_and_reach_no_effect_when_quiet():
    out = ss.simulate(ss.ScreeningTruth((0.0,) * 6, NoiseModel(cv=0.05), 3, RATE), 40, seed=4)
    assert out.share(fx.MATTERS, range(6)) <= 0.05
    quiet = ss.simulate(ss.ScreeningTruth((0.0,) * 6, QUIET, 3, RATE), 20, seed=5)
    assert quiet.share(fx.NO_EFFECT, range(6)) >= 0.9
    assert (quiet.recommended == -1).all() and (quiet.loss_pct == 0).all()
    assert (quiet.configurations, quiet.full_factorial) == (16, 64)


def test_a_knob_left_out_costs_its_true_effect():
    """Noise too large to decide anything: the recommendation is the base, whose loss is the
    effect it leaves on the table (a rate: 10 %; a time that +1 makes 10 % shorter: 1/0.9)."""
    rate = ss.simulate(ss.ScreeningTruth((10.0, 0.0, 0.0, 0.0), NoiseModel(cv=0.6), 1, RATE),
                       2, seed=6)
    assert (rate.decisions == fx.UNDECIDED).all() and (rate.recommended == -1).all()
    assert rate.loss_pct == pytest.approx([10.0] * 2)
    time = ss.simulate(ss.ScreeningTruth((-10.0, 0.0, 0.0, 0.0), NoiseModel(cv=0.6), 1, TIME),
                       2, seed=6)
    assert time.loss_pct == pytest.approx([100 / 0.9 - 100] * 2)


def test_an_interaction_the_full_factorial_resolves_sets_both_knobs():
    """Three knobs (the full factorial): no main effects, k1 x k2 halves the value where the
    two agree, as in the base; the recommendation makes them disagree."""
    truth = ss.ScreeningTruth((0.0, 0.0, 0.0), QUIET, 3, RATE, {(0, 1): -50.0})
    assert truth.true_log(np.array([[-1, -1, -1], [1, -1, 1]])) == pytest.approx(
        [log(0.5) / 2, -log(0.5) / 2])
    out = ss.simulate(truth, 10, seed=7)
    assert (out.recommended[:, 0] * out.recommended[:, 1] == -1).all()
    assert out.loss_pct == pytest.approx(np.zeros(10), abs=1e-9)


def test_the_noise_has_the_stated_cv_and_block_correlation():
    truth = ss.ScreeningTruth((0.0,) * 4, NoiseModel(cv=0.08, rho=0.6), 50)
    rows = np.array([[-1, -1, -1, -1], [1, 1, 1, 1]])
    v = np.log(ss.draw_values(truth, rows, 200, seed=8))
    assert v.shape == (200, 50, 2)
    assert np.std(v) == pytest.approx(log(1 + 0.08 ** 2) ** 0.5, rel=0.03)
    assert np.corrcoef(v[..., 0].ravel(), v[..., 1].ravel())[0, 1] == pytest.approx(0.6, abs=0.03)


def test_the_seed_decides_everything():
    truth = ss.ScreeningTruth((30.0, 0.0, 0.0, 0.0), NoiseModel(cv=0.05), 2, RATE)
    a, b = ss.simulate(truth, 3, seed=9), ss.simulate(truth, 3, seed=9)
    assert (a.decisions == b.decisions).all() and (a.loss_pct == b.loss_pct).all()
    rows = np.array([[-1, -1, -1, -1]])
    assert not np.array_equal(ss.draw_values(truth, rows, 2, 1), ss.draw_values(truth, rows, 2, 2))


@pytest.mark.parametrize("make, message", [
    (lambda: ss.ScreeningTruth((), QUIET, 3), "1 to 20 effects"),
    (lambda: ss.ScreeningTruth((0.0,) * 21, QUIET, 3), "1 to 20 effects"),
    (lambda: ss.ScreeningTruth((-100.0, 0.0), QUIET, 3), "above -100"),
    (lambda: ss.ScreeningTruth((float("nan"), 0.0), QUIET, 3), "above -100"),
    (lambda: ss.ScreeningTruth((0.0, 0.0), QUIET, 3, RATE, {(0, 2): 10.0}), "interaction"),
    (lambda: ss.ScreeningTruth((0.0, 0.0), QUIET, 3, RATE, {(1, 1): 10.0}), "interaction"),
    (lambda: ss.ScreeningTruth((0.0, 0.0), QUIET, 3, RATE, {(0, 1): -100.0}), "interaction"),
    (lambda: ss.ScreeningTruth((0.0, 0.0), QUIET, 0), "blocks 0"),
    (lambda: ss.ScreeningTruth((0.0, 0.0), QUIET, 3, fx.EffectQuestion(True, 1.5, 5.0)),
     "alpha"),
    (lambda: ss.ScreeningTruth((0.0, 0.0), QUIET, 3, fx.EffectQuestion(True, 0.05, 0.0)),
     "min_effect_pct"),
    (lambda: ss.ScreeningTruth((0.0, 0.0), NoiseModel(position_pct=3.0), 3), "position"),
    (lambda: ss.simulate(ss.ScreeningTruth((0.0, 0.0), QUIET, 3), 0), "runs 0"),
])
def test_bad_input_is_refused_with_what_to_fix(make, message):
    with pytest.raises(ValueError, match=message):
        make()
