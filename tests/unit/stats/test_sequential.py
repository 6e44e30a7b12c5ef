"""Confidence sequences for adaptive trials: the t-mixture, its inversion, the runner's question."""
from math import log

import numpy as np
import pytest
from scipy import integrate
from scipy import stats as sps

from virtbench.core.decisions import Decided
from virtbench.foundations.stats import decision as dc
from virtbench.foundations.stats import sequential as sq
from virtbench.foundations.stats import simulate as sm


def _bf_by_integration(t, n, g):
    """Lai's mixture from its definition: the noncentral-t likelihood ratio of the t statistic
    (the scale-invariant reduction of the data), averaged over delta ~ N(0, g)."""
    nu = n - 1
    f = lambda dl: (sps.nct.pdf(t, nu, dl * np.sqrt(n)) / sps.t.pdf(t, nu)    # noqa: E731
                    * sps.norm.pdf(dl, 0, np.sqrt(g)))
    return integrate.quad(f, -30, 30, limit=200)[0]


@pytest.mark.parametrize("t,n,g", [(2.0, 6, 0.5), (3.1, 20, 0.3), (-1.2, 10, 2.0), (0.0, 8, 1.0)])
def test_closed_form_bayes_factor_is_the_t_mixture(t, n, g):
    assert float(sq.bayes_factor(t, n, g)) == pytest.approx(_bf_by_integration(t, n, g), rel=1e-6)


def test_the_sequence_is_where_the_bayes_factor_stays_below_its_threshold():
    g = 0.4
    for thr in (sq.two_sided(0.05), sq.one_sided(0.05)):
        for n in (6, 20, 60):
            c = float(sq.multiplier(n, thr, g))
            assert np.isfinite(c)
            assert float(sq.bayes_factor(c, n, g)) == pytest.approx(thr, rel=1e-9)
    assert np.isinf(sq.multiplier(1, 20.0, g)) and np.isinf(sq.multiplier(2, 20.0, 0.4))
    assert sq.one_sided(0.05) == pytest.approx(10.5)      # level 2a/(1+a) = 0.0952


def test_mixture_g_makes_the_sequence_tightest_where_asked():
    for tight_at in (10, 20, 40):
        g = sq.mixture_g(20.0, tight_at)
        c = float(sq.multiplier(tight_at, 20.0, g))
        assert c < float(sq.multiplier(tight_at, 20.0, g * 1.5))
        assert c < float(sq.multiplier(tight_at, 20.0, g / 1.5))
    # wider than a fixed-n t interval, narrowing as blocks come
    c = sq.multiplier(np.array([6, 10, 20, 30, 60]), 20.0, sq.mixture_g(20.0))
    assert np.all(np.diff(c) < 0) and np.all(c > sps.t.ppf(0.975, np.array([6, 10, 20, 30, 60]) - 1))


def test_sequences_are_running_intersections_of_mean_plus_minus_c_sd():
    d = np.random.default_rng(4).normal(0.02, 0.06, 40)
    seq = sq.sequences(d)
    n = np.arange(1, 41)
    assert seq.mean == pytest.approx(np.cumsum(d) / n)
    assert seq.sd[9] == pytest.approx(d[:10].std(ddof=1))
    c = sq.multiplier(n, sq.two_sided(0.05), sq.mixture_g(sq.two_sided(0.05)))
    raw_lo = np.where(np.isfinite(c), seq.mean - c * seq.sd / np.sqrt(n), -np.inf)
    assert seq.lo == pytest.approx(np.maximum.accumulate(raw_lo))
    fin = np.isfinite(seq.lo)
    assert fin[5:].all() and not fin[0]
    assert np.all(np.diff(seq.lo[fin]) >= 0) and np.all(np.diff(seq.hi[fin]) <= 0)
    assert np.all(seq.eq_hi - seq.eq_lo <= seq.hi - seq.lo + 1e-15)   # equivalence is narrower


def test_anytime_p_is_below_alpha_exactly_when_the_sequence_excludes_one():
    d = sm.log_ratios(sm.NoiseModel(cv=0.05), 500, 40, 1.04, seed=3)
    seq = sq.sequences(d)
    p = sq.anytime_p(d)
    excl = (seq.lo > 0) | (seq.hi < 0)
    assert np.array_equal(p < 0.05, excl)
    assert np.all(np.diff(p, axis=-1) <= 0)
    assert 0.2 < excl[:, -1].mean() < 1


def _rows(ratio, n, seed, sd=0.05):
    d = log(ratio) + np.random.default_rng(seed).normal(0, sd, n)
    return {b: float(np.exp(x)) for b, x in enumerate(d)}, {b: 1.0 for b in range(n)}


def test_decide_sequential_agrees_with_the_simulator_on_the_same_blocks():
    d = sm.log_ratios(sm.NoiseModel(cv=0.05, rho=0.3), 40, 60, 1.05, seed=8)
    batch = sq.codes(sq.sequences(d), 10.0)
    for run in range(40):
        for n in (6, 17, 60):
            env = {b: float(np.exp(x)) for b, x in enumerate(d[run, :n])}
            ref = {b: 1.0 for b in range(n)}
            got = sq.decide_sequential(env, ref, higher_is_better=False)
            assert got.decision == dc.CODES[batch[run, n - 1]]
            assert got.analysis == "sequential" and got.p_method == sq.P_ANYTIME


def test_decisions_and_notes_of_the_sequential_rows():
    env, ref = _rows(1.3, 12, 1)
    d = sq.decide_sequential(env, ref, higher_is_better=False)
    assert d.decision == Decided.FAIL and d.direction == "worse" and d.analysis == "sequential"
    env, ref = _rows(1.0, 5, 1)
    d = sq.decide_sequential(env, ref, higher_is_better=False)
    assert d.decision == Decided.INCONCLUSIVE and d.notes == (dc.BelowMinimum(6),)
    assert sq.decide_sequential({}, {}, False).notes == (dc.NoBlocks(),)
    env, ref = _rows(1.0, 8, 2, sd=0.1)
    d = sq.decide_sequential(env, ref, higher_is_better=False)
    assert d.decision == Decided.INCONCLUSIVE and d.blocks_needed > 8 and d.mdc_pct > 0


def test_still_undecided_lists_the_rows_that_need_another_block_and_why():
    rows = {
        "few": sq.RowState(*_rows(1.0, 4, 1), higher_is_better=False),
        "slow": sq.RowState(*_rows(1.4, 8, 2), higher_is_better=False),
        "noisy": sq.RowState(*_rows(1.05, 8, 3, sd=0.2), higher_is_better=False),
        "done": sq.RowState(*_rows(1.05, 60, 4, sd=0.2), higher_is_better=False),
        "tight": sq.RowState(*_rows(1.0, 40, 5, sd=0.005), higher_is_better=True),
    }
    todo = sq.still_undecided(rows)
    assert set(todo) == {"few", "noisy"}
    assert todo["few"] == sq.Undecided(4, 6)
    assert todo["noisy"].decision.decision == Decided.INCONCLUSIVE
    assert todo["noisy"].decision.blocks_needed > 8 and todo["noisy"].resolve_pct is None


def test_a_pass_keeps_running_only_when_a_resolution_is_asked():
    # 3 % slower: equivalent within 10 % from block 12. Without a resolution that pass
    # answers the question and the row stops there; asked a 5 % resolution it runs on while
    # a 5 % change is not ruled out, and decides "differs" at block 16
    env, ref = _rows(1.03, 60, 6, sd=0.04)
    seen = {}
    for n in range(6, 61):
        e = {b: env[b] for b in range(n)}
        r = {b: ref[b] for b in range(n)}
        row = {"r": sq.RowState(e, r, higher_is_better=False)}
        seen[n] = (sq.decide_sequential(e, r, False).decision,
                   "r" in sq.still_undecided(row, resolve_pct=5),
                   "r" in sq.still_undecided(row))
    running_passes = [n for n, (dec, more, _) in seen.items() if dec == Decided.PASS and more]
    assert running_passes == [12, 13, 14, 15]
    why = sq.still_undecided(
        {"r": sq.RowState({b: env[b] for b in range(12)}, {b: ref[b] for b in range(12)},
                          False)}, resolve_pct=5)["r"]
    assert why.decision.decision == Decided.PASS and why.resolve_pct == 5
    stopped = [n for n, (_, more, _) in seen.items() if not more]
    assert stopped[0] == 16 and seen[16][0] == Decided.DIFFERS
    # no resolution asked (the default): the first block decided is where it stops
    first_decided = min(n for n, (dec, _, _) in seen.items() if dec != Decided.INCONCLUSIVE)
    assert first_decided == 12 and seen[12][0] == Decided.PASS
    assert [n for n, (_, _, more) in seen.items() if not more][0] == first_decided
    assert all(more for n, (_, _, more) in seen.items() if n < first_decided)
    assert not sq.still_undecided(
        {"r": sq.RowState({b: env[b] for b in range(12)}, {b: ref[b] for b in range(12)},
                          False)}, resolve_pct=float("inf"))


def test_identical_blocks_give_a_point_sequence_and_no_numerical_warnings():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = sq.anytime_p(np.full(8, log(1.05)))
        assert np.all(np.isfinite(p)) and p[0] == 1 and p[-1] < 0.01
        e, r = {b: 1.05 for b in range(8)}, {b: 1.0 for b in range(8)}
        d = sq.decide_sequential(e, r, higher_is_better=False)
        assert d.decision == Decided.DIFFERS and d.ci_low == pytest.approx(1.05)
        same = sq.decide_sequential(r, r, higher_is_better=False)
        assert same.decision == Decided.PASS and same.estimate == 1 and same.overhead_pct == 0
        assert float(sq.bayes_factor(np.inf, 8, 0.5)) == pytest.approx(5 ** 3.5)   # u^((n-1)/2), u = 1 + n g


@pytest.mark.parametrize("ratio", [1.0, 1.04, 1.1, 1.2, 0.8])
def test_the_sequential_band_p_is_below_alpha_exactly_when_the_sequences_decide(ratio):
    rng = np.random.default_rng(11)
    for _ in range(30):
        n = int(rng.integers(6, 40))
        d = np.log(ratio) + rng.normal(0, 0.05, n)
        env = {b: float(np.exp(x)) for b, x in enumerate(d)}
        dec = sq.decide_sequential(env, {b: 1.0 for b in range(n)}, higher_is_better=False)
        decided = dec.decision in ("pass", "differs, within threshold", "fail")
        assert (dec.p_band < 0.05) == decided, (n, dec)
