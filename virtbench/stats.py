"""Statistics: pure functions of sample lists. No I/O, no store, no environments.

The seed studies' method is kept as the headline number (drop the highest and the lowest
sample, average the rest); around it we add what they lacked: median, spread, a bootstrap
confidence interval, a permutation test against the baseline, and warnings about noise.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

CONFIDENCE = 0.95
N_RESAMPLES = 4999
CV_WARN = 0.05          # pyperf warns past a few percent of relative deviation
MAD_OUTLIER_Z = 3.5     # Iglewicz & Hoaglin's modified z-score cut-off
FEW_SAMPLES = 6


def trimmed_mean(samples, axis=-1):
    """The seed method: drop one highest and one lowest sample, mean of the rest.

    Below 3 samples there is nothing to drop, so it is the plain mean. Works along `axis`
    so the bootstrap can call it on a whole batch of resamples at once.
    """
    a = np.asarray(samples, dtype=float)
    n = a.shape[axis]
    if n == 0:
        raise ValueError("no samples")
    if n < 3:
        return a.mean(axis=axis)
    a = np.sort(a, axis=axis)
    return np.take(a, range(1, n - 1), axis=axis).mean(axis=axis)


@dataclass(frozen=True)
class Summary:
    n: int
    trimmed_mean: float
    median: float
    stdev: float | None       # sample standard deviation (ddof=1); None below 2 samples
    cv: float | None          # stdev / mean
    ci_low: float | None      # 95 % bootstrap CI of the trimmed mean
    ci_high: float | None


def _rng(seed):
    return np.random.default_rng(seed)


def bootstrap_ci(samples, seed=0, confidence=CONFIDENCE):
    """Percentile bootstrap CI of the trimmed mean; None when it cannot be estimated."""
    a = np.asarray(samples, dtype=float)
    if a.size < 2:
        return None, None
    if np.all(a == a[0]):
        return float(a[0]), float(a[0])
    res = sps.bootstrap((a,), trimmed_mean, confidence_level=confidence, n_resamples=N_RESAMPLES,
                        method="percentile", vectorized=True, rng=_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def summarize(samples, seed=0) -> Summary:
    a = np.asarray(samples, dtype=float)
    if a.size == 0:
        raise ValueError("no samples")
    mean = float(a.mean())
    stdev = float(a.std(ddof=1)) if a.size > 1 else None
    cv = stdev / abs(mean) if stdev is not None and mean != 0 else None
    low, high = bootstrap_ci(a, seed)
    return Summary(n=int(a.size), trimmed_mean=float(trimmed_mean(a)), median=float(np.median(a)),
                   stdev=stdev, cv=cv, ci_low=low, ci_high=high)


def overhead_pct(ratio: float, higher_is_better: bool) -> float:
    """How much worse than the baseline, in %, positive = worse, whatever the direction.

    ratio = environment / baseline on the metric's own scale. Throughput at 0.8 of the
    baseline is 20 % overhead; a time at 1.25 of the baseline is 25 % overhead.
    """
    return (1.0 - ratio) * 100.0 if higher_is_better else (ratio - 1.0) * 100.0


def permutation_p_value(a, b, seed=0) -> float | None:
    """Two-sided permutation test of a difference in means (exact when small enough)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        return None
    if np.all(np.concatenate([a, b]) == a[0]):
        return 1.0

    def diff(x, y, axis=-1):
        return x.mean(axis=axis) - y.mean(axis=axis)

    res = sps.permutation_test((a, b), diff, permutation_type="independent", vectorized=True,
                               n_resamples=9999, alternative="two-sided", rng=_rng(seed))
    return float(res.pvalue)


@dataclass(frozen=True)
class Comparison:
    ratio: float
    overhead_pct: float
    ci_low: float | None        # 95 % bootstrap CI of overhead_pct
    ci_high: float | None
    ratio_ci_low: float | None
    ratio_ci_high: float | None
    p_value: float | None
    verdict: str                # "pass" within the threshold, else "fail"


def compare(samples, baseline, higher_is_better: bool, threshold_pct: float = 10.0,
            seed=0) -> Comparison:
    """An environment's samples against the baseline's, on trimmed means."""
    a = np.asarray(samples, dtype=float)
    b = np.asarray(baseline, dtype=float)
    base = float(trimmed_mean(b))
    if base == 0:
        raise ValueError("baseline is zero: no ratio")
    ratio = float(trimmed_mean(a)) / base
    over = overhead_pct(ratio, higher_is_better)
    r_low = r_high = None
    if a.size >= 2 and b.size >= 2:
        def ratio_stat(x, y, axis=-1):
            return trimmed_mean(x, axis=axis) / trimmed_mean(y, axis=axis)
        if np.all(a == a[0]) and np.all(b == b[0]):
            r_low = r_high = ratio
        else:
            res = sps.bootstrap((a, b), ratio_stat, confidence_level=CONFIDENCE,
                                n_resamples=N_RESAMPLES, method="percentile", vectorized=True,
                                paired=False, rng=_rng(seed))
            r_low, r_high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if r_low is None:
        o_low = o_high = None
    else:
        o_low, o_high = sorted((overhead_pct(r_low, higher_is_better),
                                overhead_pct(r_high, higher_is_better)))
    return Comparison(ratio=ratio, overhead_pct=over, ci_low=o_low, ci_high=o_high,
                      ratio_ci_low=r_low, ratio_ci_high=r_high,
                      p_value=permutation_p_value(a, b, seed),
                      # rounded so that exactly 10 % is not passed by a floating-point hair
                      verdict="pass" if round(abs(over), 9) < threshold_pct else "fail")


def change_verdict(change_pct: float, p_value: float | None, alpha: float = 0.01,
                   min_change_pct: float = 5.0) -> str:
    """A/B between two runs (Firecracker's rule): a change counts only when it is both
    significant (p < alpha) and larger than the noise threshold."""
    if p_value is None:
        return "inconclusive"
    if p_value < alpha and abs(change_pct) > min_change_pct:
        return "worse" if change_pct > 0 else "better"
    return "same"


def mad_outliers(samples, z: float = MAD_OUTLIER_Z) -> list[int]:
    """Indexes of samples whose modified z-score (median/MAD) exceeds z."""
    a = np.asarray(samples, dtype=float)
    if a.size < 5:      # with fewer, one sample cannot be told from the spread of the rest
        return []
    med = np.median(a)
    mad = np.median(np.abs(a - med))
    if mad == 0:
        return []
    scores = 0.6745 * (a - med) / mad
    return [int(i) for i in np.flatnonzero(np.abs(scores) > z)]


def noise_warnings(samples) -> list[tuple[str, str]]:
    """(kind, message) pairs in the pyperf spirit; each message says what to do."""
    a = np.asarray(samples, dtype=float)
    found: list[tuple[str, str]] = []
    if a.size < FEW_SAMPLES:
        found.append(("few_samples", f"only {a.size} samples: the CI and p-value are rough; "
                      "run 12 trials (--trials 12) as the seed studies did"))
    if a.size >= 2 and a.mean() != 0:
        cv = float(a.std(ddof=1) / abs(a.mean()))
        if cv > CV_WARN:
            found.append(("high_cv", f"CV {cv * 100:.1f} % is above {CV_WARN * 100:.0f} %: "
                          "stop other work on the host, set the CPU governor to performance, "
                          "or raise --trials"))
    for i in mad_outliers(a):
        found.append(("outlier", f"trial {i + 1} ({a[i]:.4g}) is an outlier by MAD: something "
                      "disturbed it; check the host's load at that time or rerun"))
    return found
