"""Adaptive trials: decisions that stay valid when the runner looks after every block.

The runner (trials = "auto") runs min_blocks blocks, then after every further block asks,
for each undecided row, whether it is decided, and stops the row when it is (or at
max_blocks). A fixed-n interval looked at after every block would be wrong: checking a 95 %
t interval 55 times and stopping at the first that excludes 1 finds a "difference" in far
more than 5 % of A/A runs (tests/unit/stats/test_sequential.py measures it). Here every interval
is a confidence sequence: it covers the true mean log ratio at EVERY block count at once,
with probability >= its level, so stopping whenever one looks decisive costs nothing.

The sequence: Lai's (1976) t-mixture for the normal mean with unknown variance. For log
ratios d_1..d_n ~ N(mu, sigma^2) and a candidate mu0, let t be the one-sample t statistic
of d - mu0 (nu = n - 1 degrees of freedom). Mixing the standardised effect
delta = (mu - mu0) / sigma over N(0, g), with the scale-invariant (right Haar) prior on
sigma, gives the Bayes factor

    B_n(mu0) = (1 + n g)^(-1/2) * ((nu + t^2) / (nu + t^2 / (1 + n g)))^(n / 2)

which is the likelihood ratio of the scale-invariant reduction of the data (d / |d_1|),
so under mu = mu0 it is a nonnegative martingale with B_1 = 1 whatever sigma is
(Lai 1976; Grunwald, de Heide & Koolen, "Safe testing", 2024; Perez-Ortiz et al.,
"E-statistics, group invariance and anytime-valid testing", 2024; Lindon et al.,
"Anytime-valid linear models", 2022, give the same statistic for regression). Ville's
inequality then gives P(B_n(mu) >= 1/a for some n) <= a: {mu0 : B_n(mu0) < 1/a} is a
(1 - a) confidence sequence, exact (not asymptotic) for normal log ratios at every n.
B_n grows with t^2, so the sequence is mean(d) +- c_n s / sqrt(n) with, for K =
((1 + n g)^(1/2) / a)^(2 / n), c_n^2 = nu (K - 1) / (1 - K / (1 + n g)) (infinite while
K >= 1 + n g: no interval yet). Intersecting the intervals seen so far keeps the guarantee.

Levels, as the fixed-n rule (stats.decision): "fail" and "significant" use the (1 - alpha)
two-sided sequence. Equivalence ("pass", "differs, within threshold") is a one-sided claim
on each edge (Schuirmann's TOST reads it off a (1 - 2 alpha) interval). The symmetric
mixture is the average of the two half-normal mixtures B+ and B-, each itself a test
martingale; when t <= 0, B+ <= 1 (the noncentral t has a monotone likelihood ratio and
f_delta(0) <= f_0(0)), so B >= (1 + 1/alpha) / 2 forces B- >= 1/alpha: using that threshold
(a two-sided level 2 alpha / (1 + alpha), 0.0952 at alpha 0.05 instead of 0.1) bounds each
edge's error by alpha exactly.

g, the prior variance of the effect size, only decides at which block count the sequence is
tightest; it must be fixed before the data. It is chosen so that the multiplier is smallest
at TIGHT_AT blocks (20: between the minimum of 6 and the maximum of 60 on a log scale, and
where the power goal of detecting 5 % within 30 blocks is decided).

The stopping rule (`still_undecided`, `stop_codes`), as a specification. Let T be the
study's threshold (%), R its resolution (%, `resolution`, `--resolution`; none by default),
n a row's usable blocks, and D_n its decision above at n blocks. A row needs another block
exactly when

    n < min_blocks,
    or D_n is "inconclusive" (its own or after the family's correction) and n < max_blocks,
    or R is given, D_n is "pass", the (1 - alpha) sequence does not yet lie within
       [1 - R/100, 1 + R/100], and n < max_blocks.

Otherwise it stops: a verdict at the threshold ("pass", "fail", "differs, within threshold")
answers the study's question, so without R the run ends at the first block where every
row is decided. R asks a finer question of a pass ("is any difference under R %?"); it is
never required (an A/A twin decided "pass" at 6 blocks stops there). The run's adaptive
record lists as undecided only the rows whose decision is "inconclusive"; a decided pass
short of R is listed as unresolved, never as undecided. Any rule for stopping keeps the
sequences valid, this one included: each decision is as valid at the block the row stopped
as at any other.

The anytime-valid p of "no difference" is min(1, 1 / max_k B_k(0)) (`anytime_p`): a
valid p at any stopping time, so Holm/BH apply to it (stats.multiplicity). Heavy tails
are not covered by the proof; tests/unit/stats/test_sequential.py measures A/A false alarms under
t(3) noise and 20 % outliers.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import exp, log
from typing import Hashable, Mapping

import numpy as np
from scipy import optimize

from ...core.decisions import Decided
from . import paired
from .band import band_p_from_sides
from .decision import (
    CODE,
    CODES,
    DEFAULT_ALPHA,
    DEFAULT_THRESHOLD_PCT,
    ESTIMATOR_PAIRED,
    BelowMinimum,
    Decision,
    Evidence,
    NoBlocks,
    Note,
    Question,
    Reading,
    blocks_needed,
    build,
    classify_many,
    mdc_from_multiplier,
)
from ...core.defaults import MAX_TRIALS, MIN_TRIALS

DEFAULT_MIN_BLOCKS = MIN_TRIALS      # adaptive trials' bounds (core/defaults.py)
DEFAULT_MAX_BLOCKS = MAX_TRIALS
TIGHT_AT = 20
P_ANYTIME = "anytime-valid (t-mixture Bayes factor at ratio 1)"
NEED_HOW = ("observed ratio and spread of log ratios held, confidence-sequence width at n "
            "blocks, 80 % probability of deciding (normal approximation)")
SEQUENTIAL = Reading("sequential", ESTIMATOR_PAIRED, P_ANYTIME, NEED_HOW)


def bayes_factor(t, n, g):
    """B_n from the module docstring, for t statistics `t` at n observations."""
    t = np.abs(np.asarray(t, dtype=float))
    n = np.asarray(n, dtype=float)
    nu = n - 1
    u = 1 + n * g
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        big = t > 1.0       # divide by t^2 first: no overflow, and t = inf (sd 0) gives u
        q = np.where(big, nu / np.where(big, t, 1.0) / np.where(big, t, 1.0), 0.0)
        ratio = np.where(big, (q + 1) / (q + 1 / u), (nu + t * t) / (nu + t * t / u))
        log_b = -0.5 * np.log(u) + (n / 2) * np.log(ratio)
        return np.exp(np.where(n >= 2, log_b, 0.0))


def two_sided(level: float) -> float:
    """Bayes-factor threshold of a two-sided (1 - level) sequence."""
    return 1.0 / level


def one_sided(alpha: float) -> float:
    """Threshold at which each edge of the symmetric sequence errs with probability <= alpha."""
    return (1.0 + 1.0 / alpha) / 2.0


def multiplier(n, threshold: float, g: float) -> np.ndarray:
    """c_n: the sequence is mean +- c_n * sd / sqrt(n); inf where there is no interval yet."""
    n = np.asarray(n, dtype=float)
    u = 1 + n * g
    with np.errstate(divide="ignore", invalid="ignore"):
        log_k = (2 / n) * (0.5 * np.log(u) + log(threshold))
        k = np.exp(log_k)
        c2 = (n - 1) * (k - 1) / (1 - k / u)
    ok = (n >= 2) & (k < u) & np.isfinite(c2)
    return np.where(ok, np.sqrt(np.where(ok, c2, 1.0)), np.inf)


@lru_cache(maxsize=64)
def mixture_g(threshold: float, tight_at: int = TIGHT_AT) -> float:
    """The g whose sequence is narrowest at `tight_at` blocks."""
    res = optimize.minimize_scalar(lambda lg: min(1e9, float(multiplier(tight_at, threshold, exp(lg)))),
                                   bounds=(-10.0, 10.0), method="bounded")
    return float(exp(res.x))


@dataclass(frozen=True)
class Sequences:
    """Per block count n = 1..N (last axis): running-intersected log-scale bounds."""
    mean: np.ndarray
    sd: np.ndarray
    lo: np.ndarray          # (1 - alpha) two-sided sequence
    hi: np.ndarray
    eq_lo: np.ndarray       # equivalence sequence (each edge at alpha)
    eq_hi: np.ndarray


def _bounds(mean, sd, n, threshold, g):
    c = multiplier(n, threshold, g)
    with np.errstate(invalid="ignore"):
        half = np.where(np.isfinite(c), c * sd / np.sqrt(n), np.inf)
    lo = np.maximum.accumulate(mean - half, axis=-1)
    hi = np.minimum.accumulate(mean + half, axis=-1)
    return lo, hi


def sequences(d, alpha: float = DEFAULT_ALPHA, tight_at: int = TIGHT_AT) -> Sequences:
    """Confidence sequences of mean d after each block; d is (..., blocks) in block order."""
    d = np.asarray(d, dtype=float)
    n = np.arange(1, d.shape[-1] + 1, dtype=float)
    s1 = np.cumsum(d, axis=-1)
    s2 = np.cumsum(d * d, axis=-1)
    mean = s1 / n
    with np.errstate(divide="ignore", invalid="ignore"):
        var = np.where(n >= 2, (s2 - n * mean * mean) / (n - 1), np.nan)
    sd = np.sqrt(np.clip(var, 0.0, None))
    sd = np.where(sd < 1e-12 * np.maximum(1.0, np.abs(mean)), 0.0, sd)    # constant d
    t_diff, t_eq = two_sided(alpha), one_sided(alpha)
    lo, hi = _bounds(mean, sd, n, t_diff, mixture_g(t_diff, tight_at))
    eq_lo, eq_hi = _bounds(mean, sd, n, t_eq, mixture_g(t_eq, tight_at))
    return Sequences(mean, sd, lo, hi, eq_lo, eq_hi)


def anytime_p(d, alpha: float = DEFAULT_ALPHA, tight_at: int = TIGHT_AT) -> np.ndarray:
    """Anytime-valid p of mean d = 0 after each block (running minimum of 1 / B_n(0)),
    with the g of the (1 - alpha) sequence, so p < alpha exactly when that sequence
    excludes 0."""
    d = np.asarray(d, dtype=float)
    n = np.arange(1, d.shape[-1] + 1, dtype=float)
    mean = np.cumsum(d, axis=-1) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        var = (np.cumsum(d * d, axis=-1) - n * mean * mean) / (n - 1)
        t = mean * np.sqrt(n) / np.sqrt(np.clip(var, 0.0, None))
    t = np.where(n >= 2, np.nan_to_num(t, nan=0.0, posinf=np.inf, neginf=-np.inf), 0.0)
    b = bayes_factor(t, n, mixture_g(two_sided(alpha), tight_at))
    return np.minimum(1.0, 1.0 / np.maximum.accumulate(b, axis=-1))


def _t_at(d, mu0):
    """(n, mean, t statistic of d - mu0) after each block (t 0 before 2 blocks)."""
    d = np.asarray(d, dtype=float)
    n = np.arange(1, d.shape[-1] + 1, dtype=float)
    mean = np.cumsum(d, axis=-1) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        var = (np.cumsum(d * d, axis=-1) - n * mean * mean) / (n - 1)
        sd = np.sqrt(np.clip(var, 0.0, None))
        sd = np.where(sd < 1e-12 * np.maximum(1.0, np.abs(mean)), 0.0, sd)   # constant d
        t = (mean - mu0) * np.sqrt(n) / sd
    t = np.where(n >= 2, np.nan_to_num(t, nan=0.0, posinf=np.inf, neginf=-np.inf), 0.0)
    return n, mean, t


def band_p(d, threshold_pct: float, alpha: float = DEFAULT_ALPHA, tight_at: int = TIGHT_AT
           ) -> float | None:
    """The band claim's anytime-valid p (stats.decision's p_band) after the last block: for
    an edge, the largest Bayes factor at that edge over the blocks so far whose mean lay on
    the claimed side (the intervals are intersected, so any such block counts). Beyond an
    edge: 1 / B with the (1 - alpha) sequence's g (< alpha exactly when that sequence lies
    beyond it); inside: 1 / (2 B - 1) with the equivalence sequence's g (< alpha exactly when
    B passes its threshold (1 + 1/alpha) / 2). None below 2 blocks."""
    d = np.asarray(d, dtype=float)
    if d.size < 2:
        return None
    g_diff, g_eq = mixture_g(two_sided(alpha), tight_at), mixture_g(one_sided(alpha), tight_at)

    def best(edge, above, g):
        n, mean, t = _t_at(d, edge)
        side = (mean > edge) if above else (mean < edge)
        b = np.where(side & (n >= 2), bayes_factor(t, n, g), 0.0)
        return float(b.max())

    def p_inside(edge, above):
        b = best(edge, above, g_eq)
        return 1.0 if b <= 1 else min(1.0, 1.0 / (2 * b - 1))

    def p_beyond(edge, above):
        b = best(edge, above, g_diff)
        return 1.0 if b <= 1 else min(1.0, 1.0 / b)
    return band_p_from_sides(float(d.mean()), p_inside, p_beyond, threshold_pct)


def codes(seq: Sequences, threshold_pct: float) -> np.ndarray:
    """The decision after every block, as its decision.CODE (decision.classify_many;
    significant: the (1 - alpha) sequence excludes 0)."""
    return classify_many(seq.lo, seq.hi, seq.eq_lo, seq.eq_hi, (seq.lo > 0) | (seq.hi < 0),
                         threshold_pct)


def resolved(seq: Sequences, threshold_pct: float, resolve_pct: float | None = None) -> np.ndarray:
    """Whether the (1 - alpha) sequence has ruled out a change of resolve_pct either way:
    the ratio lies within [1 - r, 1 + r]. None (the default: no resolution asked) or inf:
    nothing more to rule out, every block counts as resolved. A "pass" that is not yet
    resolved keeps running (see still_undecided)."""
    if resolve_pct is None:
        return np.ones(np.shape(seq.lo), dtype=bool)
    r = resolve_pct / 100
    if r >= 1:          # resolve_pct inf (or >= 100): nothing more to rule out
        return np.ones(np.shape(seq.lo), dtype=bool)
    return (seq.lo > log(1 - r)) & (seq.hi < log(1 + r))


def stop_codes(seq: Sequences, threshold_pct: float, resolve_pct: float | None = None
               ) -> np.ndarray:
    """codes() where a row may stop: a pass counts only once resolved(), else inconclusive."""
    c = codes(seq, threshold_pct)
    return np.where((c == CODE[Decided.PASS]) & ~resolved(seq, threshold_pct, resolve_pct),
                    CODE[Decided.INCONCLUSIVE], c)


def _mult(alpha, tight_at, level: float | None = None):
    """The sequences' multiplier c_n(eq): with the mixtures (g) of `alpha`, the ones the
    decisions and their p use, at `level` (default alpha). A family's correction asks
    for level alpha / m with the same g: a sequence tuned for alpha cannot reach a much
    smaller level in a few blocks (its Bayes factor is bounded at n blocks), and the blocks
    that would decide must say so."""
    level = alpha if level is None else level
    g_diff = mixture_g(two_sided(alpha), tight_at)
    g_eq = mixture_g(one_sided(alpha), tight_at)
    t_diff, t_eq = two_sided(level), one_sided(level)

    def mult(n, eq):
        return multiplier(n, t_eq, g_eq) if eq else multiplier(n, t_diff, g_diff)
    return mult


def decide_sequential(env: Mapping[Hashable, float], ref: Mapping[Hashable, float],
                      higher_is_better: bool, threshold_pct: float = DEFAULT_THRESHOLD_PCT,
                      alpha: float = DEFAULT_ALPHA, min_blocks: int = DEFAULT_MIN_BLOCKS,
                      tight_at: int = TIGHT_AT) -> Decision:
    """The decision from the confidence sequences over the blocks both sides have, in block
    order. Before min_blocks it is inconclusive whatever the sequences say (the runner's
    minimum). Valid at whatever block count the runner stopped."""
    question = Question(higher_is_better, threshold_pct, alpha)
    lr = paired.log_ratios(env, ref)
    n = lr.n
    mult = _mult(alpha, tight_at)
    if n == 0:
        return build(Evidence(Decided.INCONCLUSIVE, SEQUENTIAL, blocks=0, p=None,
                              notes=(NoBlocks(),)), question)
    seq = sequences(lr.d, alpha, tight_at)
    decided = CODES[int(codes(seq, threshold_pct)[-1])]
    notes: tuple[Note, ...] = ()
    if n < min_blocks:
        decided, notes = Decided.INCONCLUSIVE, (BelowMinimum(min_blocks),)
    m, s = float(seq.mean[-1]), (float(seq.sd[-1]) if n >= 2 else None)
    need = blocks_needed(m, s, threshold_pct, mult, at_least=max(n + 1, min_blocks))
    return build(Evidence(
        decided, SEQUENTIAL, blocks=n, m=m, s=s,
        log_ci=(float(seq.lo[-1]), float(seq.hi[-1])),
        log_eq_ci=(float(seq.eq_lo[-1]), float(seq.eq_hi[-1])),
        p=float(anytime_p(lr.d, alpha, tight_at)[-1]),
        p_band=band_p(lr.d, threshold_pct, alpha, tight_at) if n >= min_blocks else None,
        mdc_pct=mdc_from_multiplier(n, s, float(mult(np.array(n), False))), need=need,
        notes=notes), question)


@dataclass(frozen=True)
class RowState:
    """What the runner knows of one (environment, metric) row: {block: value} of both."""
    env: Mapping[Hashable, float]
    ref: Mapping[Hashable, float]
    higher_is_better: bool
    threshold_pct: float = DEFAULT_THRESHOLD_PCT


@dataclass(frozen=True)
class Undecided:
    """Why a row needs another block: fewer blocks than the minimum yet (no decision), or
    its decision; a pass (only when a resolution was asked) runs on until a change of
    `resolve_pct` % is ruled out too."""
    blocks: int
    min_blocks: int
    decision: Decision | None = None
    resolve_pct: float | None = None


def still_undecided(rows: Mapping[Hashable, RowState], alpha: float = DEFAULT_ALPHA,
                    min_blocks: int = DEFAULT_MIN_BLOCKS, max_blocks: int = DEFAULT_MAX_BLOCKS,
                    tight_at: int = TIGHT_AT, resolve_pct: float | None = None
                    ) -> dict[Hashable, Undecided]:
    """The rows that need another block, each with why: the module docstring's stopping
    rule before the family's correction (analysis.undecided applies that). A row leaves
    when it has max_blocks blocks, or is decided ("pass", "fail", "differs, within
    threshold"); when `resolve_pct` is given, a "pass" leaves only once its (1 - alpha)
    sequence also rules out a change of resolve_pct either way (`stop_codes`). Stopping for
    any of these reasons, at any block, is what the sequences stay valid under."""
    out: dict[Hashable, Undecided] = {}
    for key, row in rows.items():
        lr = paired.log_ratios(row.env, row.ref)
        if lr.n >= max_blocks:
            continue
        if lr.n < min_blocks:
            out[key] = Undecided(lr.n, min_blocks)
            continue
        seq = sequences(lr.d, alpha, tight_at)
        if stop_codes(seq, row.threshold_pct, resolve_pct)[-1] != CODE[Decided.INCONCLUSIVE]:
            continue
        d = decide_sequential(row.env, row.ref, row.higher_is_better, row.threshold_pct,
                              alpha, min_blocks, tight_at)
        out[key] = Undecided(lr.n, min_blocks, d,
                             resolve_pct if d.decision == Decided.PASS else None)
    return out
