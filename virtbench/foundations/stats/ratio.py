"""Verdicts: an environment against the baseline (pass / fail / inconclusive) and run B
against run A (worse / better / same / inconclusive). Each says why, and when the samples
could not decide, how many trials per side would.

Baseline verdict (the published studies' ±threshold rule, made honest about noise):
- inconclusive: the test cannot reach alpha with these trial counts at all, or the overhead
  is beyond the threshold but not significant (p >= alpha), or it is within the threshold
  but the test had under 80 % power to see a threshold-sized change;
- fail: |overhead| >= threshold and p < alpha; `direction` says which way ("worse" = slower,
  more retransmits...; "better" = faster than the baseline);
- pass: |overhead| < threshold and the test could have seen a threshold-sized change.
`direction` is set whenever the ratio lies outside the threshold band, null inside it.

Compare verdict (Firecracker's A/B rule plus power): worse / better when p < alpha and
|change| > min-change; same when the change is significant but small, or not significant
while the test had >= 80 % power to see min-change; inconclusive otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from ...core import defaults
from . import significance as sig
from .describe import CONFIDENCE, N_RESAMPLES, cv, rng, trimmed_mean

DEFAULT_ALPHA = defaults.ALPHA


def overhead_pct(ratio: float, higher_is_better: bool) -> float:
    """How much worse than the baseline, in %, positive = worse, whatever the direction.

    ratio = environment / baseline on the metric's own scale. Throughput at 0.8 of the
    baseline is 20 % overhead; a time at 1.25 of the baseline is 25 % overhead.
    """
    return (1.0 - ratio) * 100.0 if higher_is_better else (ratio - 1.0) * 100.0


@dataclass(frozen=True)
class Verdict:
    verdict: str                  # pass/fail/inconclusive or worse/better/same/inconclusive
    direction: str | None         # "worse" | "better" | None
    power: float | None           # to see a change of the threshold / min-change
    trials_needed: int | None     # per side, to reach alpha with 80 % power (None: enough)
    message: str


def _pc(x: float) -> str:
    return f"{x:.0f} %"


def _need_text(n: int | None, n_a: int, n_b: int, cv_known: bool = True) -> str:
    if n is None and not cv_known:
        return "the noise cannot be estimated (a mean of 0), so neither can the trials needed"
    if n is None:
        return "the noise is too high for any practical number of trials; quieten the host"
    return f"run at least {n} trials per side (has {n_a} vs {n_b})"


def _undecided(n_a, n_b, alpha, cv_pooled, change_pct) -> tuple[float | None, int | None, str | None]:
    """(power, trials needed, why not decidable) for a change of change_pct %."""
    if sig.trials_to_reach(alpha) is None:
        return None, None, (f"no number of trials lets the test reach alpha {alpha:g} (its "
                            f"smallest p is {2 / (sig.N_PERMUTATIONS + 1):.2g}); raise alpha")
    if n_a < 2 or n_b < 2:
        need = sig.trials_to_reach(alpha)
        return None, need, f"fewer than 2 samples a side: no test; {_need_text(need, n_a, n_b)}"
    pw = sig.power(n_a, n_b, cv_pooled, change_pct / 100, alpha)
    need = sig.trials_for_power(cv_pooled, change_pct / 100, alpha)
    if not sig.can_reach(n_a, n_b, alpha):
        need = need or sig.trials_to_reach(alpha)
        return pw, need, (f"with {n_a} vs {n_b} trials the smallest p the test can give is "
                          f"{sig.min_p_value(n_a, n_b):.3g}, not below alpha {alpha:g}; "
                          + _need_text(need, n_a, n_b))
    return pw, need, None


def baseline_verdict(overhead: float, p_value: float | None, n_a: int, n_b: int,
                     cv_pooled: float | None, threshold_pct: float = defaults.THRESHOLD_PCT,
                     alpha: float = DEFAULT_ALPHA, reference: str = "the baseline",
                     effect_floor_pct: float | None = None) -> Verdict:
    """pass / fail / inconclusive at the threshold. Power and trials needed are sized for a
    change of the threshold; when the overhead is beyond it, for the smallest overhead the
    data allow (`effect_floor_pct`: the CI bound nearest zero), so a 17x slowdown asks for
    the few trials that would show it, not for those that would show a 10 % one."""
    # rounded so that exactly 10 % is not passed by a floating-point hair
    outside = round(abs(overhead), 9) >= threshold_pct
    direction = ("worse" if overhead > 0 else "better") if outside else None
    size_for_power = threshold_pct
    if outside and effect_floor_pct is not None:
        size_for_power = max(threshold_pct, min(abs(overhead), effect_floor_pct))
    pw, need, why = _undecided(n_a, n_b, alpha, cv_pooled, size_for_power)
    size = f"{abs(overhead):.1f} % {'worse' if overhead > 0 else 'better'} than {reference}"
    if why:
        return Verdict("inconclusive", direction, pw, need, f"{size}: {why}")
    if outside:
        if p_value is not None and p_value < alpha:
            return Verdict("fail", direction, pw, None,
                           f"{size}, beyond ±{threshold_pct:g} % (p {p_value:.3g} < {alpha:g})")
        return Verdict("inconclusive", direction, pw, need,
                       f"{size} but not significant (p {p_value:.3g} >= {alpha:g}); "
                       + _need_text(need, n_a, n_b, cv_pooled is not None))
    if pw is not None and pw >= sig.TARGET_POWER:
        return Verdict("pass", None, pw, None,
                       f"within ±{threshold_pct:g} % of {reference} "
                       f"(power {_pc(pw * 100)} to see a {threshold_pct:g} % change)")
    power_text = "unknown" if pw is None else f"only {_pc(pw * 100)}"
    return Verdict("inconclusive", None, pw, need,
                   f"{size}, within ±{threshold_pct:g} %, but the test had {power_text} "
                   f"power to see a {threshold_pct:g} % change; "
                   + _need_text(need, n_a, n_b, cv_pooled is not None))


def compare_verdict(change_pct: float, p_value: float | None, n_a: int | None = None,
                    n_b: int | None = None, cv_pooled: float | None = None,
                    alpha: float = 0.01, min_change_pct: float = 5.0) -> Verdict:
    """Run B against run A; change_pct positive = B worse."""
    direction = "worse" if change_pct > 0 else "better"
    if p_value is None:
        return Verdict("inconclusive", None, None, sig.trials_to_reach(alpha),
                       "fewer than 2 samples a side: no test")
    known = n_a is not None and n_b is not None
    pw, need, why = (_undecided(n_a, n_b, alpha, cv_pooled, min_change_pct) if known
                     else (None, None, None))
    if why:
        return Verdict("inconclusive", None, pw, need, why)
    if p_value < alpha:
        if abs(change_pct) > min_change_pct:
            return Verdict(direction, direction, pw, None,
                           f"B {abs(change_pct):.1f} % {direction} than A (p {p_value:.3g})")
        return Verdict("same", None, pw, None,
                       f"significant but within ±{min_change_pct:g} % ({change_pct:+.1f} %)")
    if pw is not None and pw >= sig.TARGET_POWER:
        return Verdict("same", None, pw, None,
                       f"no change beyond ±{min_change_pct:g} % (power {_pc(pw * 100)})")
    msg = (f"not significant (p {p_value:.3g} >= {alpha:g})"
           + (f" and {'unknown' if pw is None else 'only ' + _pc(pw * 100)} power to see a "
              f"{min_change_pct:g} % change; " + _need_text(need, n_a, n_b, cv_pooled is not None)
              if known else ""))
    return Verdict("inconclusive", None, pw, need, msg)


def change_verdict(change_pct: float, p_value: float | None, alpha: float = 0.01,
                   min_change_pct: float = 5.0, n_a: int | None = None, n_b: int | None = None,
                   cv_pooled: float | None = None) -> str:
    """The compare verdict's word alone (see compare_verdict)."""
    return compare_verdict(change_pct, p_value, n_a, n_b, cv_pooled, alpha, min_change_pct).verdict


@dataclass(frozen=True)
class Comparison:
    ratio: float
    overhead_pct: float
    ci_low: float | None        # 95 % bootstrap CI of overhead_pct
    ci_high: float | None
    ratio_ci_low: float | None
    ratio_ci_high: float | None
    p_value: float | None       # permutation test of the trimmed-mean difference
    verdict: str                # "pass" | "fail" | "inconclusive"
    direction: str | None = None
    power: float | None = None
    trials_needed: int | None = None
    message: str = ""
    alpha: float = DEFAULT_ALPHA
    cv_pooled: float | None = None


def ratio_ci(a, b, seed=0, confidence: float = CONFIDENCE) -> tuple[float | None, float | None]:
    """Bootstrap CI of trimmed_mean(a) / trimmed_mean(b) (95 % unless told)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        return None, None
    if np.all(a == a[0]) and np.all(b == b[0]):
        r = float(a[0] / b[0])
        return r, r

    def ratio_stat(x, y, axis=-1):
        return trimmed_mean(x, axis=axis) / trimmed_mean(y, axis=axis)
    res = sps.bootstrap((a, b), ratio_stat, confidence_level=confidence, n_resamples=N_RESAMPLES,
                        method="percentile", vectorized=True, paired=False, rng=rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def compare(samples, baseline, higher_is_better: bool, threshold_pct: float = defaults.THRESHOLD_PCT,
            seed=0, alpha: float = DEFAULT_ALPHA, reference: str = "the baseline") -> Comparison:
    """An environment's samples against the baseline's, on trimmed means."""
    a = np.asarray(samples, dtype=float)
    b = np.asarray(baseline, dtype=float)
    base = float(trimmed_mean(b))
    if base == 0:
        raise ValueError("baseline is zero: no ratio")
    ratio = float(trimmed_mean(a)) / base
    over = overhead_pct(ratio, higher_is_better)
    r_low, r_high = ratio_ci(a, b, seed)
    if r_low is None:
        o_low = o_high = None
    else:
        o_low, o_high = sorted((overhead_pct(r_low, higher_is_better),
                                overhead_pct(r_high, higher_is_better)))
    p = sig.permutation_p_value(a, b, seed)
    cvp = sig.pooled_cv(cv(a), a.size, cv(b), b.size)
    floor = None
    if o_low is not None and o_low * o_high > 0:      # the CI excludes no overhead at all
        floor = min(abs(o_low), abs(o_high))
    v = baseline_verdict(over, p, int(a.size), int(b.size), cvp, threshold_pct, alpha, reference,
                         effect_floor_pct=floor)
    return Comparison(ratio=ratio, overhead_pct=over, ci_low=o_low, ci_high=o_high,
                      ratio_ci_low=r_low, ratio_ci_high=r_high, p_value=p,
                      verdict=v.verdict, direction=v.direction, power=v.power,
                      trials_needed=v.trials_needed, message=v.message, alpha=alpha,
                      cv_pooled=cvp)
