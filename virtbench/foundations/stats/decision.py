"""The decision for one (environment, metric) row against its reference.

Vocabulary (the user-facing contract, docs/decisions.md). The band is the threshold T % on the
metric's own scale: ratio = env / reference must lie in [1 - T/100, 1 + T/100] (overhead %
is (1 - ratio) * 100 when higher is better, (ratio - 1) * 100 when lower is better, so the
band is +-T % of overhead either way).
- "pass": equivalent. The (1 - 2 alpha) interval of the ratio lies wholly inside the band
  (Schuirmann's two one-sided tests at alpha, read off the interval) and no difference is
  detected (not significant at alpha).
- "differs, within threshold": significant at alpha, and the (1 - 2 alpha) interval lies
  wholly inside the band.
- "fail": the (1 - alpha) interval lies wholly beyond the band on one side; `direction`
  says "worse" (more overhead) or "better".
- "inconclusive": anything else, with the blocks that would decide (`blocks_needed`).
`classify` applies the rule: a `Decided` (virtbench/core/decisions.py, the one vocabulary
of decisions: the result model stores it, the report shows it).

A Decision is figures, not sentences: its `notes` say in figures what qualifies it (too few
blocks for an interval, a test that cannot reach alpha), stats.multiplicity records a claim
the family's correction takes back (`taken_back`), and
virtbench/results/report/words/decisions.py words it all for the result model
(VsReference.message).

What "significant" and "interval" are depends on the analysis:
- paired (default, randomised blocks; stats.paired): the t interval of the mean log ratio;
  significant = the sign-flip permutation p < alpha.
- sequential (adaptive trials; stats.sequential): anytime-valid confidence sequences;
  significant = the (1 - alpha) sequence excludes ratio 1.
- unpaired (`--analysis unpaired`): stats.ratio and stats.significance read with this
  rule: ratio of trimmed means, percentile bootstrap interval, permutation p; always
  inconclusive while the permutation test cannot reach alpha with these sample counts (a
  percentile bootstrap of 3 samples a side is far too narrow to be evidence).

Blocks needed (`blocks_needed`): with the observed mean log ratio m and the observed spread s
held fixed, the fewest blocks n at which the interval, centred on m, clears the nearer band
edge(s) with 80 % probability. With c(n) the interval's multiplier at n blocks (the t
quantile, or the confidence sequence's) and se = s / sqrt(n): m inside the band (to decide
pass/differs, both edges must be cleared) Phi((hi - m)/se - c) + Phi((m - lo)/se - c) - 1
>= 0.8; m beyond an edge (to decide fail) Phi(|m - edge|/se - c) >= 0.8. A normal
approximation for the estimate's wobble (s is taken as known); None when m sits on an edge
or it would take more than MAX_BLOCKS.

The band claim's p (`p_band`): stats/band.py.

Minimal detectable change (`mdc_pct`): the smallest change (in % of the ratio) that this many
blocks with this spread detect (significant at alpha) with 80 % power. Paired: the paired t
test's power (noncentral t), which approximates the sign-flip test's; sequential: the
normal approximation above with the sequence's multiplier; unpaired: significance.power.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from math import exp, log, sqrt
from typing import Callable, Hashable, Mapping

import numpy as np
from scipy import optimize
from scipy import stats as sps

from ...core import defaults
from ...core.decisions import Decided, Direction
from . import paired
from .band import _doubled, band, band_p_from_sides, band_p_t  # noqa: F401  (re-exported)
from . import significance as sig
from .ratio import overhead_pct, bootstrap_ratio_ci
from .describe import N_RESAMPLES, cv, quiet_bootstrap, rng, trimmed_mean

DEFAULT_ALPHA = defaults.ALPHA
DEFAULT_THRESHOLD_PCT = defaults.THRESHOLD_PCT
TARGET_POWER = sig.TARGET_POWER
MAX_BLOCKS = 10_000

ESTIMATOR_PAIRED = "geometric-mean ratio of paired blocks"
ESTIMATOR_UNPAIRED = "ratio of trimmed means"
P_SIGN_FLIP = "paired sign-flip permutation of log ratios"
P_UNPAIRED = "permutation of trimmed means (unpaired)"
NEED_HOW_PAIRED = ("observed ratio and spread of log ratios held, paired t interval, "
                   "80 % probability of deciding (normal approximation)")
NEED_HOW_UNPAIRED = ("observed ratio and pooled CV held, trials per side for the permutation "
                     "test of trimmed means, 80 % probability of deciding (normal approximation)")
NO_INTERVAL = (-np.inf, np.inf)


# classify_many gives a whole array of decisions at once (stats.simulate,
# stats.sequential.codes), each as its index here: numpy compares integers fast
CODES = (Decided.INCONCLUSIVE, Decided.PASS, Decided.DIFFERS, Decided.FAIL)
CODE = {d: i for i, d in enumerate(CODES)}


@dataclass(frozen=True)
class Question:
    """What a decision answers: does env / reference lie inside ±threshold_pct % on the
    metric's own scale, at level alpha?"""
    higher_is_better: bool
    threshold_pct: float = DEFAULT_THRESHOLD_PCT
    alpha: float = DEFAULT_ALPHA


@dataclass(frozen=True)
class Reading:
    """How an analysis reads the blocks: its name, estimator and test, and how it counts
    the blocks that would decide."""
    analysis: str                    # "paired" | "sequential" | "unpaired"
    estimator: str
    p_method: str
    need_how: str


PAIRED = Reading("paired", ESTIMATOR_PAIRED, P_SIGN_FLIP, NEED_HOW_PAIRED)
UNPAIRED = Reading("unpaired", ESTIMATOR_UNPAIRED, P_UNPAIRED, NEED_HOW_UNPAIRED)


class UnpairedBecause(StrEnum):
    """Why a row of a paired analysis was read unpaired (its caller's choice, said in its
    message)."""
    NO_LOG = "no logarithm"          # values of 0 or below
    OTHER_RUN = "other run"          # another run's row: no common blocks
    FEW_COMMON = "few common"        # fewer than 2 blocks hold both values


@dataclass(frozen=True)
class NoInterval:
    """Fewer than 2 blocks hold both values: no interval (paired)."""


@dataclass(frozen=True)
class NoBlocks:
    """No block holds both values (sequential)."""


@dataclass(frozen=True)
class BelowMinimum:
    """Fewer blocks than the runner's minimum: inconclusive whatever the sequences say."""
    min_blocks: int


@dataclass(frozen=True)
class SignFlipUnreachable:
    """With these blocks the sign-flip test cannot reach p < alpha: its smallest p."""
    smallest_p: float


@dataclass(frozen=True)
class PermutationUnreachable:
    """With these samples a side the permutation test cannot reach p < alpha: its smallest p."""
    reference_samples: int
    smallest_p: float


Note = NoInterval | NoBlocks | BelowMinimum | SignFlipUnreachable | PermutationUnreachable


@dataclass(frozen=True)
class TakenBack:
    """A claim of a decision that the family's correction did not let stand
    (stats.multiplicity): the band claim, or the claim of a difference."""
    claim: str                       # "band" | "difference"
    was: Decided                     # the decision before the correction
    method: str                      # "holm" | "bh"
    rows: int                        # the claims corrected together
    adjusted_p: float
    blocks_needed: int | None        # band: to decide at alpha / rows; difference: from
                                     # which the sign-flip test can reach it


@dataclass(frozen=True)
class Evidence:
    """What one reading of the blocks found, on the log-ratio scale, and its decision."""
    decided: Decided
    reading: Reading
    blocks: int                      # blocks (paired) or samples of the environment (unpaired)
    m: float | None = None           # mean log ratio; None: no estimate
    s: float | None = None           # spread of the log ratios; None: unknown
    log_ci: tuple[float, float] = NO_INTERVAL       # (1 - alpha) interval; +-inf: none yet
    log_eq_ci: tuple[float, float] = NO_INTERVAL    # (1 - 2 alpha) interval
    p: float | None = None           # raw p of "no difference"
    p_band: float | None = None
    mdc_pct: float | None = None
    need: int | None = None          # blocks that would decide
    notes: tuple[Note, ...] = ()


@dataclass(frozen=True)
class Decision:
    decision: Decided
    direction: Direction | None
    analysis: str                    # "paired" | "sequential" | "unpaired"
    estimator: str
    estimate: float | None           # ratio env / reference
    overhead_pct: float | None       # positive = worse, on the metric's own scale
    ci_low: float | None             # (1 - alpha) interval of the ratio
    ci_high: float | None
    eq_ci_low: float | None          # (1 - 2 alpha) interval of the ratio (equivalence)
    eq_ci_high: float | None
    p_value: float | None            # raw p of "no difference"
    p_method: str
    blocks: int                      # blocks (paired) or samples of the environment (unpaired)
    sd_log: float | None             # spread of the log ratios (paired/sequential)
    mdc_pct: float | None            # minimal detectable change, % of the ratio
    blocks_needed: int | None        # to decide (inconclusive rows only)
    blocks_needed_how: str
    alpha: float
    threshold_pct: float
    higher_is_better: bool
    p_holm: float | None = None      # family-wise adjusted p (multiplicity.adjust_family)
    p_bh: float | None = None
    p_band: float | None = None      # raw p of the band claim (band_p): inside or beyond +-T
    p_band_holm: float | None = None
    p_band_bh: float | None = None
    notes: tuple[Note, ...] = ()     # what qualifies it, in figures (module docstring)
    taken_back: TakenBack | None = None


def classify(lo: float, hi: float, eq_lo: float, eq_hi: float, significant: bool,
             threshold_pct: float) -> Decided:
    """The decision rule on log-scale intervals: lo/hi the (1 - alpha) interval, eq_lo/eq_hi
    the (1 - 2 alpha) one, significant at alpha or not. Bounds may be +-inf (no interval
    yet). Inside / beyond are strict: an interval touching an edge has not cleared it."""
    return CODES[int(classify_many(lo, hi, eq_lo, eq_hi, significant, threshold_pct))]


def classify_many(lo, hi, eq_lo, eq_hi, significant, threshold_pct: float) -> np.ndarray:
    """classify() over arrays at once: an array of decisions as their CODE."""
    b_lo, b_hi = band(threshold_pct)
    lo, hi, eq_lo, eq_hi = (np.asarray(x, dtype=float) for x in (lo, hi, eq_lo, eq_hi))
    sig_ = np.asarray(significant, dtype=bool)
    beyond = (lo > b_hi) | (hi < b_lo)
    inside = (eq_lo > b_lo) & (eq_hi < b_hi)
    return np.where(beyond, CODE[Decided.FAIL],
                    np.where(inside, np.where(sig_, CODE[Decided.DIFFERS], CODE[Decided.PASS]),
                             CODE[Decided.INCONCLUSIVE]))


def _side(log_ratio: float, higher_is_better: bool) -> Direction:
    return (Direction.WORSE if overhead_pct(exp(log_ratio), higher_is_better) > 0
            else Direction.BETTER)


def blocks_needed(m: float, s: float | None, threshold_pct: float,
                  multiplier: Callable[[np.ndarray, bool], np.ndarray],
                  power: float = TARGET_POWER, at_least: int = 2) -> int | None:
    """Fewest blocks n >= at_least that decide (module docstring). `multiplier(n, eq)` gives
    the interval's multiplier at n blocks for the equivalence interval (eq=True) or the
    difference interval (eq=False)."""
    if s is None or not np.isfinite(m):
        return None
    b_lo, b_hi = band(threshold_pct)
    inside = b_lo < m < b_hi
    if m in (b_lo, b_hi):
        return None
    if s == 0:
        return max(at_least, 2)
    n = np.arange(max(at_least, 2), MAX_BLOCKS + 1)
    se = s / np.sqrt(n)
    with np.errstate(invalid="ignore"):
        if inside:      # both edges must be cleared (TOST): P(hi clear) + P(lo clear) - 1
            c = multiplier(n, True)
            pw = sps.norm.cdf((b_hi - m) / se - c) + sps.norm.cdf((m - b_lo) / se - c) - 1
        else:
            pw = sps.norm.cdf(abs(m - (b_hi if m > b_hi else b_lo)) / se - multiplier(n, False))
    ok = np.nan_to_num(pw, nan=0.0) >= power
    return int(n[np.argmax(ok)]) if ok.any() else None


def t_multiplier(alpha: float) -> Callable[[np.ndarray, bool], np.ndarray]:
    """Fixed-n paired t intervals: t quantile at 1 - alpha (eq) or 1 - alpha/2."""
    def mult(n, eq):
        return sps.t.ppf(1 - alpha if eq else 1 - alpha / 2, np.asarray(n) - 1)
    return mult


def paired_power(n: int, s: float, change_log: float, alpha: float) -> float:
    """Power of the two-sided paired t test on log ratios (noncentral t)."""
    if n < 2:
        return 0.0
    df = n - 1
    crit = sps.t.ppf(1 - alpha / 2, df)
    ncp = abs(change_log) * sqrt(n) / s
    if ncp - crit > 12:
        return 1.0
    return float(sps.nct.sf(crit, df, ncp) + sps.nct.cdf(-crit, df, ncp))


def mdc_paired(n: int, s: float | None, alpha: float, power: float = TARGET_POWER) -> float | None:
    """Minimal detectable change of the paired design, % of the ratio (module docstring);
    None when the spread is unknown or alpha is out of the sign-flip test's reach."""
    if s is None or n < 2:
        return None
    mp = paired.min_sign_flip_p(n)
    if mp is None or mp >= alpha:
        return None
    if s == 0:
        return 0.0
    f = lambda x: paired_power(n, s, x, alpha) - power     # noqa: E731
    hi = s
    for _ in range(64):             # bounded: a power that never reaches the target is no MDC
        if f(hi) >= 0:
            break
        hi *= 2
    else:
        return None
    return (exp(optimize.brentq(f, 0.0, hi, xtol=1e-10)) - 1) * 100


def mdc_from_multiplier(n: int, s: float | None, c: float, power: float = TARGET_POWER
                        ) -> float | None:
    """Normal-approximation MDC for an interval x +- c s / sqrt(n): (c + z_power) s / sqrt(n)."""
    if s is None or n < 2 or not np.isfinite(c):
        return None
    return (exp((c + sps.norm.ppf(power)) * s / sqrt(n)) - 1) * 100


def build(evidence: Evidence, question: Question) -> Decision:
    """The Decision of `evidence` for `question`: the ratio and its intervals back on the
    ratio scale, and which way a fail (or a difference) lies."""
    e, hib = evidence, question.higher_is_better
    decision = e.decided
    est = exp(e.m) if e.m is not None else None
    over = overhead_pct(est, hib) if est is not None else None
    lo, hi = (exp(x) if np.isfinite(x) else None for x in e.log_ci)
    eq_lo, eq_hi = (exp(x) if np.isfinite(x) else None for x in e.log_eq_ci)
    b_lo, b_hi = band(question.threshold_pct)
    direction = None
    if decision == Decided.FAIL:
        direction = _side(e.log_ci[0] if e.log_ci[0] > b_hi else e.log_ci[1], hib)
    elif e.m is not None and (decision == Decided.DIFFERS or not b_lo < e.m < b_hi):
        direction = _side(e.m, hib)
    return Decision(decision=decision, direction=direction, analysis=e.reading.analysis,
                    estimator=e.reading.estimator, estimate=est, overhead_pct=over, ci_low=lo,
                    ci_high=hi, eq_ci_low=eq_lo, eq_ci_high=eq_hi, p_value=e.p,
                    p_method=e.reading.p_method, blocks=e.blocks, sd_log=e.s,
                    mdc_pct=e.mdc_pct,
                    blocks_needed=e.need if decision == Decided.INCONCLUSIVE else None,
                    blocks_needed_how=e.reading.need_how, alpha=question.alpha,
                    threshold_pct=question.threshold_pct, higher_is_better=hib,
                    p_band=e.p_band, notes=e.notes)


def decide_paired(env: Mapping[Hashable, float], ref: Mapping[Hashable, float],
                  higher_is_better: bool, threshold_pct: float = DEFAULT_THRESHOLD_PCT,
                  alpha: float = DEFAULT_ALPHA, seed=0, ci_method: str = "t") -> Decision:
    """The fixed-n paired decision from {block: value} of the environment and its reference."""
    question = Question(higher_is_better, threshold_pct, alpha)
    lr = paired.log_ratios(env, ref)
    n = lr.n
    if n < 2:
        return build(Evidence(Decided.INCONCLUSIVE, PAIRED, blocks=n,
                              m=float(lr.d.mean()) if n else None, notes=(NoInterval(),)),
                     question)
    m, s = float(lr.d.mean()), paired.sd_log(lr.d)
    ci = paired.log_ci(lr.d, 1 - alpha, ci_method, seed)
    eq = paired.log_ci(lr.d, 1 - 2 * alpha, ci_method, seed)
    p = paired.sign_flip_p(lr.d, seed)
    need = blocks_needed(m, s, threshold_pct, t_multiplier(alpha), at_least=n + 1)
    reach = _blocks_to_reach(alpha)
    need = max(need, reach) if need is not None and reach is not None else None
    mp = paired.min_sign_flip_p(n)
    return build(Evidence(
        classify(ci[0], ci[1], eq[0], eq[1], p < alpha, threshold_pct), PAIRED, blocks=n,
        m=m, s=s, log_ci=ci, log_eq_ci=eq, p=p,
        p_band=band_p_t(lr.d, threshold_pct) if ci_method == "t" else None,
        mdc_pct=mdc_paired(n, s, alpha), need=need,
        notes=(SignFlipUnreachable(mp),) if mp >= alpha else ()), question)


def _blocks_to_reach(alpha: float) -> int | None:
    """Fewest blocks from which the sign-flip test can give p < alpha; None when no number
    can (alpha at or below the Monte Carlo test's floor, past exact enumeration)."""
    n = 2
    while paired.min_sign_flip_p(n) >= alpha:
        if n > paired.EXACT_MAX_BLOCKS:     # the floor is fixed from here on
            return None
        n += 1
    return n


def decide_unpaired(samples, baseline, higher_is_better: bool,
                    threshold_pct: float = DEFAULT_THRESHOLD_PCT, alpha: float = DEFAULT_ALPHA,
                    seed=0) -> Decision:
    """The same decision for unpaired samples (`--analysis unpaired`): stats.ratio and
    stats.significance (trimmed means, percentile bootstrap of their ratio, permutation
    test), read with the decision rule above."""
    a = np.asarray(samples, dtype=float)
    b = np.asarray(baseline, dtype=float)
    base = float(trimmed_mean(b))
    if base == 0 or float(trimmed_mean(a)) <= 0 or base < 0:
        raise ValueError("a ratio needs positive trimmed means")
    m = log(float(trimmed_mean(a)) / base)
    lo, hi = bootstrap_ratio_ci(a, b, seed, confidence=1 - alpha)
    eq_lo, eq_hi = bootstrap_ratio_ci(a, b, seed, confidence=1 - 2 * alpha)
    ci = (log(lo), log(hi)) if lo else NO_INTERVAL
    eq = (log(eq_lo), log(eq_hi)) if eq_lo else NO_INTERVAL
    p = sig.permutation_p_value(a, b, seed)
    reachable = sig.can_reach(a.size, b.size, alpha)
    decided = classify(ci[0], ci[1], eq[0], eq[1], p is not None and reachable and p < alpha,
                       threshold_pct)
    notes: tuple[Note, ...] = ()
    if not reachable:       # too few samples for any test: a bootstrap of 3 is no evidence
        decided = Decided.INCONCLUSIVE
        notes = (PermutationUnreachable(int(b.size), sig.min_p_value(a.size, b.size)),)
    boot = _bootstrap_log_ratios(a, b, seed)
    p_band = None
    if boot is not None:
        def p_at(edge, above):
            return float(np.mean(boot <= edge) if above else np.mean(boot >= edge))
        p_band = band_p_from_sides(m, p_at, _doubled(p_at), threshold_pct)
    cvp = sig.pooled_cv(cv(a), a.size, cv(b), b.size)
    s = cvp * sqrt(2) if cvp is not None else None      # per-trial sd of log(a/b), one each
    need = None
    if s is not None:
        def mult(n, eq_):
            return sps.t.ppf(1 - alpha if eq_ else 1 - alpha / 2, 2 * np.asarray(n) - 2)
        need = blocks_needed(m, s, threshold_pct, mult, at_least=max(a.size, b.size) + 1)
        reach = sig.trials_to_reach(alpha)
        need = max(need, reach) if need is not None and reach is not None else None
    mdc = None
    if cvp is not None and reachable:
        if cvp == 0:
            mdc = 0.0
        elif (sig.power(a.size, b.size, cvp, 10.0, alpha) or 0) >= TARGET_POWER:
            x = optimize.brentq(lambda c: sig.power(a.size, b.size, cvp, c, alpha) - TARGET_POWER,
                                0.0, 10.0, xtol=1e-10)
            mdc = x * 100
    return build(Evidence(decided, UNPAIRED, blocks=int(a.size), m=m, log_ci=ci, log_eq_ci=eq,
                          p=p, p_band=p_band, mdc_pct=mdc, need=need, notes=notes),
                 Question(higher_is_better, threshold_pct, alpha))


def _bootstrap_log_ratios(a: np.ndarray, b: np.ndarray, seed) -> np.ndarray | None:
    """log(trimmed mean ratio) over the bootstrap resamples ratio.bootstrap_ratio_ci draws (same
    seed, same resamples): the distribution its percentile intervals are quantiles of."""
    if a.size < 2 or b.size < 2:
        return None
    if np.all(a == a[0]) and np.all(b == b[0]):
        return np.array([log(float(a[0] / b[0]))])

    def ratio_stat(x, y, axis=-1):
        # a resample whose reference is 0 gives an unbounded ratio, said as no interval
        with np.errstate(divide="ignore", invalid="ignore"):
            return trimmed_mean(x, axis=axis) / trimmed_mean(y, axis=axis)
    with quiet_bootstrap():
        res = sps.bootstrap((a, b), ratio_stat, confidence_level=0.95,
                            n_resamples=N_RESAMPLES, method="percentile", vectorized=True,
                            paired=False, rng=rng(seed))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(np.asarray(res.bootstrap_distribution, dtype=float))
