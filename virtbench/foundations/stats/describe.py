"""Describing one sample list: the published trimmed mean, median, spread, bootstrap CI, outliers.

The published studies' method is kept as the headline number (drop the highest and the lowest
sample, average the rest); around it we add what they lacked: median, spread, a bootstrap
confidence interval and warnings about noise. Pure functions: no I/O, no store.
"""
from __future__ import annotations

import warnings
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

CONFIDENCE = 0.95
N_RESAMPLES = 4999
CV_WARN = 0.05          # pyperf warns past a few percent of relative deviation
MAD_OUTLIER_Z = 3.5     # Iglewicz & Hoaglin's modified z-score cut-off
MAD_SCALE = 0.6745      # MAD of a normal distribution in standard deviations
MEANAD_SCALE = 0.7979   # mean absolute deviation of a normal distribution, in standard deviations
FEW_SAMPLES = 6


def trimmed_mean(samples, axis=-1):
    """The published method: drop one highest and one lowest sample, mean of the rest.

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


def rng(seed):
    return np.random.default_rng(seed)


@contextmanager
def quiet_bootstrap():
    """Around scipy's bootstrap: a degenerate set of resamples gives no interval (NaN ends,
    which the callers read as none: a near-constant set under BCa; ratios whose reference
    is 0 in every resample), and a resample whose reference is 0 an unbounded ratio: said
    by the report, not as numpy's or scipy's warning on the console."""
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", sps.DegenerateDataWarning)
        yield


def bootstrap_ci(samples, seed=0, confidence=CONFIDENCE):
    """Percentile bootstrap CI of the trimmed mean; None when it cannot be estimated."""
    a = np.asarray(samples, dtype=float)
    if a.size < 2:
        return None, None
    if np.all(a == a[0]):
        return float(a[0]), float(a[0])
    res = sps.bootstrap((a,), trimmed_mean, confidence_level=confidence, n_resamples=N_RESAMPLES,
                        method="percentile", vectorized=True, rng=rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def cv(samples) -> float | None:
    """Coefficient of variation (sample stdev / |mean|); None below 2 samples or at mean 0."""
    a = np.asarray(samples, dtype=float)
    if a.size < 2 or a.mean() == 0:
        return None
    return float(a.std(ddof=1) / abs(a.mean()))


def summarize(samples, seed=0) -> Summary:
    a = np.asarray(samples, dtype=float)
    if a.size == 0:
        raise ValueError("no samples")
    stdev = float(a.std(ddof=1)) if a.size > 1 else None
    low, high = bootstrap_ci(a, seed)
    return Summary(n=int(a.size), trimmed_mean=float(trimmed_mean(a)), median=float(np.median(a)),
                   stdev=stdev, cv=cv(a), ci_low=low, ci_high=high)


def mad_outliers(samples, z: float = MAD_OUTLIER_Z) -> list[int]:
    """Indexes of samples whose modified z-score exceeds z.

    The score is 0.6745 (x - median) / MAD (Iglewicz & Hoaglin). When more than half the
    samples are equal the MAD is 0 and that score is undefined; like hyperfine we then do not
    give up but fall back to the mean absolute deviation around the median,
    score = 0.7979 (x - median) / MeanAD (the IBM/SPSS form of the same test). A value that
    differs from an otherwise unanimous set is therefore an outlier, which is what a reader
    expects of `[10, 10, 10, 10, 10, 30]`. Only when every sample is equal is there none.
    """
    a = np.asarray(samples, dtype=float)
    if a.size < 5:      # with fewer, one sample cannot be told from the spread of the rest
        return []
    med = np.median(a)
    dev = np.abs(a - med)
    mad = np.median(dev)
    if mad > 0:
        scores = MAD_SCALE * dev / mad
    else:
        mean_ad = dev.mean()
        if mean_ad == 0:
            return []
        scores = MEANAD_SCALE * dev / mean_ad
    return [int(i) for i in np.flatnonzero(scores > z)]


def _trial_names(trials, idx: list[int]) -> str:
    names = [str(trials[i]) for i in idx]
    return ("trial " if len(names) == 1 else "trials ") + ", ".join(names)


def noise_warnings(samples, trials=None, advice: str | None = None,
                   cv_advice: str | None = None) -> list[tuple[str, str]]:
    """(kind, message) pairs in the pyperf spirit; each message says what to do.

    `trials` gives each sample's trial number as the reports show it (1-based); by default
    the samples' positions + 1. `advice`: what the few-samples warning advises (the run's
    count, stats/advice.py); `cv_advice`: what the high-CV warning advises (what applies on
    the host: the analysis knows it)."""
    a = np.asarray(samples, dtype=float)
    trials = list(trials) if trials is not None else list(range(1, a.size + 1))
    found: list[tuple[str, str]] = []
    if a.size < FEW_SAMPLES:
        found.append(("few_samples", f"only {a.size} samples: the CI and p-value are rough"
                      + (f"; {advice}" if advice else "")))
    c = cv(a)
    if c is not None and c > CV_WARN:
        found.append(("high_cv", f"CV {c * 100:.1f} % is above {CV_WARN * 100:.0f} %"
                      + (f": {cv_advice}" if cv_advice else "")))
    out = mad_outliers(a)
    if out:
        values = ", ".join(f"{a[i]:.4g}" for i in out)
        found.append(("outlier", f"{_trial_names(trials, out)} ({values}) "
                      f"{'is an outlier' if len(out) == 1 else 'are outliers'} by MAD against "
                      f"the median {np.median(a):.4g}: something disturbed "
                      f"{'it' if len(out) == 1 else 'them'}; check the host's load at that time "
                      "or rerun"))
    return found
