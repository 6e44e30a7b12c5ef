"""The paired (randomised-block) analysis of one environment against its reference.

virtbench runs randomised blocks: each block runs every (environment, benchmark) once, in a
shuffled order, so a block holds one sample of the environment and one of the reference,
taken minutes apart on the same host state (Abedi & Brecht, ICPE 2017: randomized multiple
interleaved trials; Bulej et al., ICPE 2020: duet benchmarking). Comparing the two WITHIN a
block removes whatever the block shares (a noisy neighbour, a thermal state, a slow hour).

Per block the unit of analysis is the log ratio d = log(env / reference):
- estimate: the geometric-mean ratio exp(mean d). On the log scale a ratio and its inverse
  are symmetric (x 2 and x 1/2 are +-0.69), the mean of logs is what the t interval and the
  sign-flip test are about, and a multiplicative slowdown is a shift of d.
- CI: the t interval on mean d, back-transformed (`paired_ratio_ci`, method "t", the default).
  Why t and not the bootstrap: runs have 6 to 60 blocks; a percentile bootstrap of so few
  blocks is too narrow (it ignores the t quantile's small-sample correction: at 6 blocks a
  nominal 95 % percentile interval covers about 85 %, checked in tests/unit/stats/test_paired.py),
  and BCa's acceleration is estimated from the same handful of blocks. The t interval is
  exact when log ratios are normal, and paired log ratios are close to symmetric (both
  members of a block share the block's disturbances, which cancel). "bca" and "percentile"
  (scipy.stats.bootstrap over blocks) stay available for a reader who distrusts normality.
- p: a two-sided paired sign-flip permutation test of mean d (Fisher's randomisation test
  for paired data): under "no difference" the env/reference labels of a block are
  exchangeable, so each d is as likely as -d. Exact (all 2^n sign patterns) up to
  EXACT_MAX_BLOCKS blocks, else a seeded Monte Carlo test with N_SIGN_FLIPS random patterns,
  p = (1 + hits) / (1 + N). The smallest exact p is 2 / 2^n: 1/32 at 6 blocks, so alpha 0.05
  is reachable from 6 blocks on (5 blocks: 1/16).
- position effect (`position_effect`): inside a block the order is random, yet the one that
  runs first may run differently (measured here: pi ran 3 % faster the second time in a
  pair). With d = mu + phi when the environment ran first and mu - phi when the reference
  did, phi = (mean d | env first - mean d | reference first) / 2, tested with Welch's t
  test. Randomised order makes it noise, not bias; when it is significant the report should
  say so (and the order-balanced estimate removes it).

Pure functions: no I/O, no store. Everything works on the log ratios of the blocks both
sides have, in block order.
"""
from __future__ import annotations

import warnings

from dataclasses import dataclass
from itertools import product
from math import exp, log, sqrt
from typing import Hashable, Mapping

import numpy as np
from scipy import stats as sps

from .describe import quiet_bootstrap, rng

EXACT_MAX_BLOCKS = 14       # 2^14 = 16384 sign patterns, enumerated
N_SIGN_FLIPS = 9999         # Monte Carlo patterns past that
N_BOOTSTRAP = 4999
CI_METHODS = ("t", "bca", "percentile")
_REL_TOL = 1e-9             # ties of |statistic| within floating-point noise count as ties


@dataclass(frozen=True)
class LogRatios:
    blocks: tuple                # the blocks both sides have a value for, in block order
    d: np.ndarray                # log(env / reference) per block, same order

    @property
    def n(self) -> int:
        return int(self.d.size)


def log_ratios(env: Mapping[Hashable, float], ref: Mapping[Hashable, float]) -> LogRatios:
    """log(env / reference) for every block both have a value for, in block order (the
    blocks sorted). A value that is not a positive finite number has no logarithm: ValueError
    naming the block."""
    common = sorted(set(env) & set(ref))
    d = np.empty(len(common))
    for i, b in enumerate(common):
        e, r = float(env[b]), float(ref[b])
        if not (np.isfinite(e) and np.isfinite(r) and e > 0 and r > 0):
            raise ValueError(f"block {b!r}: a ratio needs positive finite values "
                             f"(environment {e!r}, reference {r!r})")
        d[i] = log(e) - log(r)
    return LogRatios(tuple(common), d)


def geometric_mean_ratio(d) -> float:
    """exp(mean of the log ratios): the ratio the blocks agree on."""
    d = np.asarray(d, dtype=float)
    if d.size == 0:
        raise ValueError("no blocks")
    return float(exp(d.mean()))


def sd_log(d) -> float | None:
    """Sample standard deviation of the log ratios; None below 2 blocks."""
    d = np.asarray(d, dtype=float)
    return float(d.std(ddof=1)) if d.size > 1 else None


def log_ci(d, confidence: float, method: str = "t", seed=0) -> tuple[float, float] | None:
    """Two-sided CI of mean d at `confidence`, on the log scale; None below 2 blocks."""
    d = np.asarray(d, dtype=float)
    if method not in CI_METHODS:
        raise ValueError(f"CI method {method!r}: use one of {', '.join(CI_METHODS)}")
    if d.size < 2:
        return None
    m = float(d.mean())
    if np.all(d == d[0]):
        return m, m
    if method == "t":
        lo, hi = t_interval(d, confidence)
        return float(lo), float(hi)
    with quiet_bootstrap():
        # a near-degenerate set (all but one ratio equal) gives BCa no interval: NaN ends,
        # which the callers read as none
        res = sps.bootstrap((d,), np.mean, confidence_level=confidence,
                            n_resamples=N_BOOTSTRAP,
                            method="BCa" if method == "bca" else "percentile",
                            vectorized=True, rng=rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def t_interval(d, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """The t interval of mean d along the last axis (many runs at once for the simulations);
    needs at least 2 blocks."""
    d = np.asarray(d, dtype=float)
    n = d.shape[-1]
    m = d.mean(axis=-1)
    half = sps.t.ppf(0.5 + confidence / 2, n - 1) * d.std(axis=-1, ddof=1) / sqrt(n)
    return m - half, m + half


def paired_ratio_ci(d, confidence: float = 0.95, method: str = "t", seed=0
                    ) -> tuple[float | None, float | None]:
    """CI of the geometric-mean ratio (the log CI back-transformed); (None, None) below 2."""
    ci = log_ci(d, confidence, method, seed)
    if ci is None:
        return None, None
    return exp(ci[0]), exp(ci[1])


def _sign_patterns(n: int, seed) -> tuple[np.ndarray, bool]:
    """(+-1 matrix with one row per sign pattern, exact?)."""
    if n <= EXACT_MAX_BLOCKS:
        return np.array(list(product((1.0, -1.0), repeat=n))), True
    return rng(seed).choice((1.0, -1.0), size=(N_SIGN_FLIPS, n)), False


def sign_flip_p(d, seed=0) -> float | np.ndarray | None:
    """Two-sided paired sign-flip permutation p of mean d (see the module docstring).

    `d` may be one run of blocks (1-D) or many runs (2-D, one run per row, all with the
    same number of blocks): the simulations call it on thousands of runs at once. None
    below 2 blocks. Every run shares the same sign patterns, which keeps each run's test
    exact (or each run's Monte Carlo test valid) and the batch fast.
    """
    a = np.asarray(d, dtype=float)
    one = a.ndim == 1
    a = np.atleast_2d(a)
    n = a.shape[-1]
    if n < 2:
        return None
    signs, exact = _sign_patterns(n, seed)
    obs = np.abs(a.sum(axis=-1))
    hits = np.zeros(a.shape[0])
    for chunk in np.array_split(signs, max(1, signs.shape[0] // 2048)):
        flipped = np.abs(a @ chunk.T)                 # runs x patterns
        hits += (flipped >= obs[:, None] * (1 - _REL_TOL)).sum(axis=-1)
    p = hits / signs.shape[0] if exact else (1 + hits) / (1 + signs.shape[0])
    # every d == 0: no evidence at all, p = 1 (the count above already gives that)
    p = np.minimum(1.0, p)
    return float(p[0]) if one else p


def min_sign_flip_p(n: int) -> float | None:
    """Smallest p the sign-flip test can give with n blocks (all d on one side)."""
    if n < 2:
        return None
    if n <= EXACT_MAX_BLOCKS:
        return 2.0 / 2 ** n
    return 1.0 / (1 + N_SIGN_FLIPS)


@dataclass(frozen=True)
class PositionEffect:
    first_pct: float | None     # how much higher a value is when it runs first in its pair, %
    ci_low_pct: float | None    # 95 % CI of first_pct (Welch)
    ci_high_pct: float | None
    p_value: float | None       # Welch's t test, two-sided; None when a group has < 2 blocks
    n_env_first: int
    n_ref_first: int
    balanced_ratio: float | None    # the geometric-mean ratio with the position effect removed
    message: str


def position_effect(lr: LogRatios, env_first: Mapping[Hashable, bool],
                    confidence: float = 0.95) -> PositionEffect:
    """'First vs later in a block' for one pair: phi from the module docstring, as a % on
    the metric's scale (+3 % = a value is 3 % higher when it ran first; for a time that is
    slower). `env_first[block]` is True when the environment ran before the reference."""
    missing = [b for b in lr.blocks if b not in env_first]
    if missing:
        raise ValueError(f"block {missing[0]!r}: which of the pair ran first is not known")
    first = np.array([bool(env_first[b]) for b in lr.blocks], dtype=bool)
    a, b = lr.d[first], lr.d[~first]
    n_a, n_b = int(a.size), int(b.size)
    if n_a < 2 or n_b < 2:
        return PositionEffect(None, None, None, None, n_a, n_b, None,
                              f"order effect not estimable: the environment ran first in "
                              f"{n_a} blocks and second in {n_b} (needs 2 of each)")
    phi = (a.mean() - b.mean()) / 2
    balanced = exp((a.mean() + b.mean()) / 2)
    va, vb = a.var(ddof=1) / n_a, b.var(ddof=1) / n_b
    if va + vb == 0:
        p = 1.0 if phi == 0 else 0.0
        lo = hi = phi
    else:
        with warnings.catch_warnings():
            # nearly identical log ratios (counts): scipy warns of precision loss; the test's
            # p is what it is, the warning is not the user's to read
            warnings.simplefilter("ignore", RuntimeWarning)
            res = sps.ttest_ind(a, b, equal_var=False)
        p = float(res.pvalue)
        ci = res.confidence_interval(confidence)
        lo, hi = ci.low / 2, ci.high / 2
    pct = (exp(phi) - 1) * 100
    word = "higher" if pct >= 0 else "lower"
    msg = (f"a value is {abs(pct):.1f} % {word} when it runs first in its block "
           f"(p {p:.3g}; environment first in {n_a} blocks, second in {n_b})")
    return PositionEffect(pct, (exp(lo) - 1) * 100, (exp(hi) - 1) * 100, p, n_a, n_b,
                          float(balanced), msg)
