"""What a planned run can decide, said before it starts (not after its last trial).

The paired analysis claims a difference inside the band ("differs, within threshold") only
when the sign-flip p of "no difference" survives the family's correction; the exact test
cannot go below 2 / 2^n with n blocks, so with m rows a lone difference needs
2 / 2^n < alpha / m (stats.multiplicity.blocks_for_a_difference). Pass and fail are band
claims with a p of their own, not bounded that way, so a run with fewer blocks still decides
them. The rows are counted from the plan (each case's metrics x each environment compared
with the baseline); groups add rows of their own (instances, spread, fairness), so the count
is a floor and the note errs toward silence. Adaptive runs add blocks until decided and
unpaired runs use another test: no note for them."""
from __future__ import annotations

from ..foundations.stats.advice import advice_text, trials_to_advise
from ..foundations.stats.multiplicity import blocks_for_a_difference, method_name


def planned_rows(prepared) -> int:
    """(environment, metric) rows the run will compare with its baseline (a floor)."""
    if prepared.baseline is None:
        return 0
    return sum(len(bench.metrics)
               for case, (bench, _params) in prepared.cases.items()
               for env in prepared.envs
               if env != prepared.baseline and (env, case) not in prepared.skip
               and (prepared.baseline, case) not in prepared.skip)


def reach_note(prepared) -> str | None:
    """One line when the planned blocks cannot let a difference inside the band survive the
    correction (paired, fixed trials only); None otherwise."""
    study = prepared.study
    if study.adaptive or study.analysis != "paired":
        return None
    rows = planned_rows(prepared)
    if rows == 0:
        return None
    alpha, correction = study.alpha, study.correction
    need = blocks_for_a_difference(rows, alpha)
    if need is not None and need <= study.trials:
        return None
    name = method_name(correction)
    band = f"±{study.threshold_pct:g} %"
    head = f"{study.trials} block(s), {rows} row(s): a lone difference inside the {band} band"
    if need is None:
        return (f"{head} cannot survive {name} at alpha {alpha:g} with any number of blocks; "
                "pass and fail still decide")
    return (f"{head} needs {need} blocks to survive {name} at alpha {alpha:g}: "
            f"{advice_text(trials_to_advise(rows, alpha))}; pass and fail still decide")
