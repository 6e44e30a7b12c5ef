"""How adaptive trials ended, as the report says it: the run's stored record
(virtbench/execution/run/adaptive.py) read against the report's own verdicts, so that the two never
disagree. A case stays listed as undecided only while one of its rows' verdicts (against
its reference or its `versus`) is "inconclusive"; the `undecided` warning says the same list.
Runs stored before 2026-12 listed every case at max_trials as undecided, decided or not
(an A/A twin's passes among them): read this way, they say what their verdicts say."""
from __future__ import annotations

from ...foundations.model import AdaptiveSummary, Result, RunWarning
from ...core.decisions import Decided

UNDECIDED = "undecided"
SEP = " · "


def inconclusive_cases(results: list[Result]) -> set[str]:
    """"environment · case" of every row with an inconclusive verdict."""
    out = set()
    for r in results:
        comparisons = ([r.vs_baseline] if r.vs_baseline else []) + list(r.vs_others)
        if any(vs.verdict == Decided.INCONCLUSIVE for vs in comparisons):
            out.add(f"{r.environment}{SEP}{r.benchmark}")
    return out


def reconcile(summary: AdaptiveSummary | None, results: list[Result],
              warnings: list[RunWarning]) -> tuple[AdaptiveSummary | None, list[RunWarning]]:
    """The summary and warnings with only the undecided cases the verdicts confirm; the
    `undecided` warning dropped when none is left, else naming only those."""
    if summary is None:
        return None, warnings
    open_cases = inconclusive_cases(results)
    kept = {case: whys for case, whys in summary.undecided.items() if case in open_cases}
    if kept == summary.undecided:
        return summary, warnings
    out: list[RunWarning] = []
    for w in warnings:
        if w.kind != UNDECIDED:
            out.append(w)
        elif kept:
            spent = f" after {summary.spent_s:.0f} s" if summary.spent_s is not None else ""
            out.append(w.model_copy(update={"message": (
                f"adaptive trials stopped ({summary.stopped}){spent} with {len(kept)} case(s) "
                f"still undecided: {', '.join(kept)}")}))
    return summary.model_copy(update={"undecided": kept}), out
