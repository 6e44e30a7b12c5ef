"""Statistics: pure functions of sample lists. No I/O, no store, no environments.

describe      one sample list: trimmed mean, median, spread, bootstrap CI, MAD outliers
significance  permutation test on the trimmed mean, smallest reachable p, power, trials needed
ratio         the ratio of trimmed means, its overhead, bootstrap interval and permutation p
change        run B against run A: the compare verdict (worse / better / same / inconclusive)
paired        randomised blocks: log ratios, geometric-mean ratio, t interval, sign-flip p, order
decision      pass / differs, within threshold / fail / inconclusive; blocks needed; MDC
band          the threshold band and the p of a decision's band claim
claims        a study's claim ("A / B >= k", "A > B", "A == B") read with the same statistics
sequential    adaptive trials: anytime-valid confidence sequences, still_undecided
multiplicity  Holm and Benjamini-Hochberg over a family of rows
simulate      noise model and simulators of the decisions (tests, bench scripts)
aggregate     several workers measured at once: work over one common interval, makespan, clocks
(docs/decisions.md)
"""
# The names below are loaded from their module on first use (PEP 562), so importing one
# light module of the package (stats.aggregate, say, from a benchmark) does not load scipy.
_EXPORTS = {
    "describe": ("CONFIDENCE", "CV_WARN", "FEW_SAMPLES", "MAD_OUTLIER_Z", "N_RESAMPLES",
                 "Summary", "bootstrap_ci", "cv", "mad_outliers", "noise_warnings", "summarize",
                 "trimmed_mean"),
    "significance": ("can_reach", "min_p_value", "permutation_p_value", "pooled_cv", "power",
                     "trials_for_power", "trials_to_reach"),
    "decision": ("DEFAULT_ALPHA", "Decision", "decide_paired", "decide_unpaired"),
    "multiplicity": ("adjust_family",),
    "sequential": ("RowState", "Undecided", "decide_sequential", "still_undecided"),
    "ratio": ("TrimmedRatio", "overhead_pct", "bootstrap_ratio_ci", "trimmed_ratio"),
    "change": ("ChangeVerdict", "change_verdict"),
}
_HOME = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = list(_HOME)


def __getattr__(name: str):
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_HOME))
