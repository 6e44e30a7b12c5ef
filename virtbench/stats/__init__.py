"""Statistics: pure functions of sample lists. No I/O, no store, no environments.

describe      one sample list: trimmed mean, median, spread, bootstrap CI, MAD outliers
significance  permutation test on the trimmed mean, smallest reachable p, power, trials needed
verdicts      baseline verdict (pass/fail/inconclusive) and compare verdict (worse/better/same/...)
paired        randomised blocks: log ratios, geometric-mean ratio, t interval, sign-flip p, order
decision      pass / differs, within threshold / fail / inconclusive; blocks needed; MDC
sequential    adaptive trials: anytime-valid confidence sequences, still_undecided
multiplicity  Holm and Benjamini-Hochberg over a family of rows
simulate      noise model and simulators of the decisions (tests, bench scripts)
aggregate     several workers measured at once: work over one common interval, makespan, clocks
(docs/decisions.md)
"""
from .describe import (CONFIDENCE, CV_WARN, FEW_SAMPLES, MAD_OUTLIER_Z, N_RESAMPLES, Summary,
                       bootstrap_ci, cv, mad_outliers, noise_warnings, summarize, trimmed_mean)
from .significance import (can_reach, min_p_value, permutation_p_value, pooled_cv, power,
                           trials_for_power, trials_to_reach)
from .decision import (DIFFERS, FAIL, INCONCLUSIVE, PASS, Decision, decide_paired,
                       decide_unpaired)
from .multiplicity import adjust_family
from .sequential import RowState, decide_sequential, still_undecided
from .verdicts import (DEFAULT_ALPHA, Comparison, Verdict, baseline_verdict, change_verdict,
                       compare, compare_verdict, overhead_pct, ratio_ci)

__all__ = ["CONFIDENCE", "CV_WARN", "FEW_SAMPLES", "MAD_OUTLIER_Z", "N_RESAMPLES", "Summary",
           "bootstrap_ci", "cv", "mad_outliers", "noise_warnings", "summarize", "trimmed_mean",
           "can_reach", "min_p_value", "permutation_p_value", "pooled_cv", "power",
           "trials_for_power", "trials_to_reach", "DEFAULT_ALPHA", "Comparison", "Verdict",
           "baseline_verdict", "change_verdict", "compare", "compare_verdict", "overhead_pct",
           "ratio_ci", "DIFFERS", "FAIL", "INCONCLUSIVE", "PASS", "Decision", "decide_paired",
           "decide_unpaired", "adjust_family", "RowState", "decide_sequential", "still_undecided"]
