"""Loops over trial counts end on an alpha no number of trials can reach (0, negative, below
the tests' floor): `compare --alpha 0` once spun forever in trials_to_reach. Each call runs
under an alarm, so a loop that spins again fails the test instead of hanging the tier."""
import signal
from contextlib import contextmanager

import pytest

from virtbench.core.decisions import CompareVerdict, Decided
from virtbench.foundations.stats import decision, paired, significance as sig
from virtbench.foundations.stats.change import ChangeBasis, change_verdict
from virtbench.results.report.words.compare import change_message


@contextmanager
def within(seconds: int):
    def stop(*_):
        raise TimeoutError(f"still looping after {seconds} s")
    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("alpha", [0.0, -1.0, 1e-5, 2 / (sig.N_PERMUTATIONS + 1)])
def test_trials_to_reach_says_none_when_no_count_can(alpha):
    with within(5):
        assert sig.trials_to_reach(alpha) is None
        assert sig.trials_for_power(0.05, 0.1, alpha) is None


@pytest.mark.parametrize("alpha, n", [(0.05, 5), (0.01, 6), (0.5, 2)])
def test_trials_to_reach_on_reachable_alphas(alpha, n):
    assert sig.trials_to_reach(alpha) == n
    assert sig.can_reach(n, n, alpha) and not sig.can_reach(n - 1, n - 1, alpha)


def test_the_first_monte_carlo_count_is_found_when_only_it_reaches():
    # 2e-4 < alpha: no exact split count reaches it before the Monte Carlo floor does
    alpha = 3 / (sig.N_PERMUTATIONS + 1)
    n = sig.trials_to_reach(alpha)
    assert n is not None and sig.can_reach(n, n, alpha) and not sig.is_exact(n, n)


@pytest.mark.parametrize("alpha", [0.0, 1e-6])
def test_blocks_to_reach_ends(alpha):
    with within(5):
        assert decision._blocks_to_reach(alpha) is None
    assert decision._blocks_to_reach(0.05) == 6
    assert paired.min_sign_flip_p(6) < 0.05 <= paired.min_sign_flip_p(5)


def test_compare_verdict_at_an_unreachable_alpha_is_inconclusive_and_says_why():
    with within(10):
        v = change_verdict(3.0, 0.2, n_a=5, n_b=5, cv_pooled=0.02, alpha=1e-6)
    assert v.verdict == CompareVerdict.INCONCLUSIVE and v.trials_needed is None
    assert v.basis == ChangeBasis.ALPHA_UNREACHABLE
    message = change_message(v)
    assert "no number of trials" in message and "raise alpha" in message


def test_paired_decision_at_an_unreachable_alpha_ends():
    # noisy blocks (±20 %) around a 5 % change: undecided at any alpha with 8 blocks
    env = {i: 105.0 * (1.2 if i % 2 else 0.8) for i in range(8)}
    ref = {i: 100.0 * (0.8 if i % 2 else 1.2) for i in range(8)}
    with within(20):
        d = decision.decide_paired(env, ref, True, alpha=1e-6)
    assert d.decision == Decided.INCONCLUSIVE and d.blocks_needed is None
