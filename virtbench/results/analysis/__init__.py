"""From stored samples to results and comparisons: numbers, enums and facts; the sentences
the result model holds are the report layer's words (results/report/words/), called here.

run         one run: per environment x benchmark x metric, statistics and vs_baseline
rows        the stored samples by block, with their order and the disturbed trials
decide      a row against its reference: the decision, the family's correction
headline    the headline's figures: factors, the geometric mean per environment
claims      the study's claims, checked
undecided   what the runner asks after each block: which cases are still undecided
references  which row each result is compared with (instances against the right baseline)
compare     two runs: change per metric, rows in one run only, metadata that differ
"""
from .compare import (compare_runs, environment_pairs, metadata_differences, names_of,
                      resolve_pairs)
from .references import References, instance_count
from ...core.defaults import ALPHA as DEFAULT_ALPHA
from .run import analyze_run
from .undecided import undecided_cases

__all__ = ["compare_runs", "environment_pairs", "metadata_differences", "names_of",
           "resolve_pairs",
           "References",
           "instance_count", "DEFAULT_ALPHA", "analyze_run", "undecided_cases"]
