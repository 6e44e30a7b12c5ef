"""The ratio of trimmed means of two sample lists, unpaired: its overhead, percentile
bootstrap interval and permutation p (`virtbench compare`'s change from run A to run B,
the published rule, `--analysis unpaired`'s decision in stats/decision.py). Figures only:
what they decide is stats/decision.py's rule (a row against its reference) or stats/change.py's
(run B against run A)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from . import significance as sig
from .describe import CONFIDENCE, N_RESAMPLES, cv, quiet_bootstrap, rng, trimmed_mean


def overhead_pct(ratio: float, higher_is_better: bool) -> float:
    """How much worse than the baseline, in %, positive = worse, whatever the direction.

    ratio = environment / baseline on the metric's own scale. Throughput at 0.8 of the
    baseline is 20 % overhead; a time at 1.25 of the baseline is 25 % overhead.
    """
    return (1.0 - ratio) * 100.0 if higher_is_better else (ratio - 1.0) * 100.0


@dataclass(frozen=True)
class TrimmedRatio:
    """Samples against a reference's, on trimmed means (trimmed_ratio)."""
    ratio: float
    overhead_pct: float
    ci_low: float | None        # 95 % bootstrap CI of overhead_pct
    ci_high: float | None
    ratio_ci_low: float | None
    ratio_ci_high: float | None
    p_value: float | None       # permutation test of the trimmed-mean difference
    cv_pooled: float | None


def bootstrap_ratio_ci(a, b, seed=0, confidence: float = CONFIDENCE
                       ) -> tuple[float | None, float | None]:
    """Bootstrap CI of trimmed_mean(a) / trimmed_mean(b) (95 % unless told); an end the
    resamples leave undefined (0 / 0) is None, an unbounded one (x / 0) inf."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        return None, None
    if np.all(a == a[0]) and np.all(b == b[0]):
        r = float(a[0] / b[0])
        return r, r

    def ratio_stat(x, y, axis=-1):
        # a resample whose reference is 0 gives an unbounded ratio, said as no interval
        with np.errstate(divide="ignore", invalid="ignore"):
            return trimmed_mean(x, axis=axis) / trimmed_mean(y, axis=axis)
    with quiet_bootstrap():
        res = sps.bootstrap((a, b), ratio_stat, confidence_level=confidence,
                            n_resamples=N_RESAMPLES, method="percentile", vectorized=True,
                            paired=False, rng=rng(seed))
    ends = (float(res.confidence_interval.low), float(res.confidence_interval.high))
    return tuple(None if np.isnan(e) else e for e in ends)


def trimmed_ratio(samples, baseline, higher_is_better: bool, seed=0) -> TrimmedRatio:
    """`samples` against `baseline`'s: the ratio of trimmed means, its overhead and their
    95 % bootstrap interval, the permutation p of the difference, the pooled CV."""
    a = np.asarray(samples, dtype=float)
    b = np.asarray(baseline, dtype=float)
    base = float(trimmed_mean(b))
    if base == 0:
        raise ValueError("baseline is zero: no ratio")
    ratio = float(trimmed_mean(a)) / base
    over = overhead_pct(ratio, higher_is_better)
    r_low, r_high = bootstrap_ratio_ci(a, b, seed)
    if r_low is None:
        o_low = o_high = None
    else:
        o_low, o_high = sorted((overhead_pct(r_low, higher_is_better),
                                overhead_pct(r_high, higher_is_better)))
    return TrimmedRatio(ratio=ratio, overhead_pct=over, ci_low=o_low, ci_high=o_high,
                        ratio_ci_low=r_low, ratio_ci_high=r_high,
                        p_value=sig.permutation_p_value(a, b, seed),
                        cv_pooled=sig.pooled_cv(cv(a), a.size, cv(b), b.size))
