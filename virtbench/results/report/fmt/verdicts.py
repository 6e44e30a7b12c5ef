"""A comparison's verdict as text: its mark (✓ / ✗ / ?) and a result's verdict cell."""
from __future__ import annotations

from ....core.decisions import Decided
from ....foundations.model import Result

DIFFERS_MARK = "✓ differs"                  # the matrix's short mark of a difference
MARKS = ("✓", "✗", "?", "differs")          # the words of the matrix's marks


def verdict_mark(verdict: Decided | None, direction: str | None = None,
                 trials_needed: int | None = None, unit: str = "trials") -> str:
    """✓ pass; ✓ differs, within threshold (worse): a real difference inside the band;
    ✗ fail (worse) / ✗ fail (better): which way it is outside the threshold;
    ? inconclusive (≥ N blocks): the samples could not decide."""
    if verdict == Decided.PASS:
        return f"✓ {verdict}"
    if verdict == Decided.DIFFERS:
        return f"✓ {verdict}" + (f" ({direction})" if direction else "")
    if verdict == Decided.FAIL:
        return f"✗ {verdict}" + (f" ({direction})" if direction else "")
    if verdict == Decided.INCONCLUSIVE:
        return f"? {verdict}" + (f" (≥ {trials_needed} {unit})" if trials_needed else "")
    return "baseline"


def need_unit(vs) -> str:
    """What a comparison's trials_needed counts: blocks (paired) or trials per side."""
    return "trials" if vs.analysis in (None, "unpaired") else "blocks"


def vs_mark(vs, baseline: str | None, run_analysis: str | None = None,
            name_reference: bool = True) -> str:
    """A comparison's verdict mark, naming its reference when it is not the baseline (a
    group's rows always name theirs; not when the row's label does) and its analysis when
    not the run's."""
    mark = verdict_mark(vs.verdict, vs.direction, vs.trials_needed, need_unit(vs))
    ref = vs.reference
    if name_reference and ref and (ref != baseline or vs.basis in ("per-instance",
                                                                   "same-instances")):
        mark += f" vs {ref}"
    if run_analysis and vs.analysis and vs.analysis != run_analysis:
        mark += f" ({vs.analysis})"
    return mark


def verdict_cell(result: Result, baseline: str | None, run_analysis: str | None = None) -> str:
    """✓/✗/? against the reference (named when it is not the run's baseline); "baseline"
    for the baseline itself; "no like-for-like baseline" for an aggregate of instances the
    run has no baseline at the same N for; "—" for a metric with no counterpart."""
    vs = result.vs_baseline
    if vs:
        return vs_mark(vs, baseline, run_analysis)
    if result.no_verdict:
        return result.no_verdict
    return "baseline" if result.environment == baseline else "—"


def comparisons(result: Result) -> list:
    """A result's comparisons: against its reference, then its further references."""
    return ([result.vs_baseline] if result.vs_baseline else []) + list(result.vs_others)

