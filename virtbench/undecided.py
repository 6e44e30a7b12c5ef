"""Which (environment, benchmark) cases of a run still need another block, and why: what the
adaptive loop (virtbench.adaptive) asks after every block.

The answer is the analysis's (`analysis.undecided_cases`: the paired sequential decisions of
the stored blocks, the study's correction over the family, disturbed trials left out) with the study's bounds
(min_trials, max_trials) as the blocks a row needs before it may decide and the blocks
after which it stops asking: {(environment, benchmark): [why, one line per undecided row]}.
"""
from __future__ import annotations

from typing import Callable

from .store import Store

Undecided = Callable[[Store, str], dict[tuple[str, str], list[str]]]


def own_reasons(undecided: dict[tuple[str, str], list[str]]) -> dict[tuple[str, str], list[str]]:
    """The cases undecided for a row of their own, with only those rows' reasons (a case
    listed only as another row's reference left out: analysis.undecided_cases lists it, so
    that it runs in the same block as the rows that need it)."""
    from .analysis.undecided import REFERENCE_OF
    out = {case: [w for w in whys if not w.startswith(REFERENCE_OF)]
           for case, whys in undecided.items()}
    return {case: whys for case, whys in out.items() if whys}


def undecided_function(min_blocks: int, max_blocks: int) -> Undecided:
    """analysis.undecided_cases with the run's bounds (the study's min_trials, max_trials)."""
    from .analysis import undecided_cases

    def ask(store: Store, run_id: str) -> dict[tuple[str, str], list[str]]:
        return undecided_cases(store, run_id, min_blocks=min_blocks, max_blocks=max_blocks)
    return ask
