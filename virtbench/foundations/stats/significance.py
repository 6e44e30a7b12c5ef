"""Significance and power: what the test on the headline statistic can and cannot say.

The p-value tests the statistic the reports headline, the trimmed mean: a two-sided
permutation test of the difference of trimmed means, exact (every split of the pooled
samples) when there are at most N_PERMUTATIONS splits, else a seeded Monte Carlo test with
that many random splits.

A permutation test has a smallest p it can ever give for n_a and n_b samples, however
far apart they are. With 3 a side that is 0.2 on the trimmed mean (swapping the two
groups' extremes leaves both trimmed means unchanged, so two splits tie with the observed
one on each side: 4 of 20), so no 3-trial comparison can reach alpha = 0.05: the verdict is
then "inconclusive", with the trials per side that could (`trials_to_reach`).

Power is approximate: a two-sample t-test (noncentral t) with the pooled coefficient of
variation, for a relative change of the given size. It ignores that the trimmed mean is a
little less efficient than the mean on normal data, so it is slightly optimistic.
"""
from __future__ import annotations

from math import comb, sqrt

import numpy as np
from scipy import stats as sps

from .describe import rng, trimmed_mean

N_PERMUTATIONS = 9999
TARGET_POWER = 0.8
MAX_TRIALS = 10_000


def _statistic(x, y, axis=-1):
    return trimmed_mean(x, axis=axis) - trimmed_mean(y, axis=axis)


def permutation_p_value(a, b, seed=0) -> float | None:
    """Two-sided permutation test of the difference of trimmed means; None below 2 a side."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        return None
    if np.all(np.concatenate([a, b]) == a[0]):
        return 1.0
    res = sps.permutation_test((a, b), _statistic, permutation_type="independent",
                               vectorized=True, n_resamples=N_PERMUTATIONS,
                               alternative="two-sided", rng=rng(seed))
    return float(res.pvalue)


def is_exact(n_a: int, n_b: int) -> bool:
    return comb(n_a + n_b, n_a) <= N_PERMUTATIONS


def min_p_value(n_a: int, n_b: int) -> float | None:
    """The smallest two-sided p the test can give for n_a and n_b samples (fully separated
    groups). With both sides >= 3 the trimmed means ignore each group's extremes, so the
    split that swaps A's largest with B's smallest ties with the observed one: 2 splits per
    tail. Below 3 the trimmed mean is the plain mean and the extreme split is alone.
    Monte Carlo tests (many splits) cannot go below 2 / (N_PERMUTATIONS + 1)."""
    if n_a < 2 or n_b < 2:
        return None
    ties = 2 if min(n_a, n_b) >= 3 else 1
    if is_exact(n_a, n_b):
        return min(1.0, 2 * ties / comb(n_a + n_b, n_a))
    return 2 / (N_PERMUTATIONS + 1)


def can_reach(n_a: int, n_b: int, alpha: float) -> bool:
    p = min_p_value(n_a, n_b)
    return p is not None and p < alpha


def trials_to_reach(alpha: float) -> int | None:
    """Fewest trials per side (equal sides) for which p < alpha is possible at all
    (5 at alpha 0.05, 6 at 0.01); None when no number can: alpha at or below the Monte Carlo
    test's floor, 2 / (N_PERMUTATIONS + 1), or not a positive number."""
    n = 2
    while not can_reach(n, n, alpha):
        n += 1
        if n > MAX_TRIALS or not is_exact(n, n):    # past exact splits the floor is fixed
            return n if can_reach(n, n, alpha) else None
    return n


def pooled_cv(cv_a: float | None, n_a: int, cv_b: float | None, n_b: int) -> float | None:
    if cv_a is None or cv_b is None or n_a + n_b <= 2:
        return None
    return sqrt(((n_a - 1) * cv_a ** 2 + (n_b - 1) * cv_b ** 2) / (n_a + n_b - 2))


def power(n_a: int, n_b: int, cv: float | None, change: float, alpha: float) -> float | None:
    """Approximate probability that the test finds a relative change `change` (0.1 = 10 %)
    significant at alpha, given the pooled CV; 0 when alpha is out of the test's reach."""
    if n_a < 2 or n_b < 2 or cv is None:
        return None
    if not can_reach(n_a, n_b, alpha):
        return 0.0
    if cv == 0:
        return 1.0
    df = n_a + n_b - 2
    delta = abs(change) / (cv * sqrt(1 / n_a + 1 / n_b))
    crit = sps.t.ppf(1 - alpha / 2, df)
    if delta - crit > 12:          # far past certain; the noncentral t's tails turn to nan
        return 1.0
    pw = float(sps.nct.sf(crit, df, delta) + sps.nct.cdf(-crit, df, delta))
    if pw != pw:                   # nan: fall back to the normal approximation
        pw = float(sps.norm.sf(crit - delta) + sps.norm.cdf(-crit - delta))
    return min(1.0, max(0.0, pw))


def trials_for_power(cv: float | None, change: float, alpha: float,
                     target: float = TARGET_POWER) -> int | None:
    """Fewest trials per side (equal sides) to reach alpha and have `target` power to see
    a relative change `change`; None when the CV is unknown or it would take more than
    MAX_TRIALS."""
    if cv is None:
        return None
    n = trials_to_reach(alpha)
    if n is None:
        return None
    if cv == 0:
        return n
    if change == 0:
        return None
    # rough normal start, then walk to the exact point
    z = sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(target)
    n = max(n, int(2 * (z * cv / abs(change)) ** 2) - 2)
    if n > MAX_TRIALS:
        return None
    while (power(n, n, cv, change, alpha) or 0) < target:
        n += 1
        if n > MAX_TRIALS:
            return None
    return n
