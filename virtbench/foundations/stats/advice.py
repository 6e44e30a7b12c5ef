"""How many trials virtbench advises: one rule, said the same way wherever advice is given
(the few-samples warning, its grouped line, the dry run's reach note, the docs).

The rule: advise the published studies' 12 trials (PUBLISHED_TRIALS: twelve, the highest
and lowest dropped), or more when the run's compared rows need more: a lone difference
inside the band among `rows` rows survives the family's correction only when the sign-flip
test's smallest p, 2 / 2^n with n blocks, is below alpha / rows
(multiplicity.blocks_for_a_difference). Past what the exact test can reach, 12 stands and
the reach note says that no count would do. Pass and fail are band claims with a p of their
own and often decide with fewer; adaptive runs (`--trials auto`) add blocks until they do.
"""
from __future__ import annotations

from ...core.defaults import TRIALS
from .multiplicity import blocks_for_a_difference

PUBLISHED_TRIALS = TRIALS       # the published method's trials (core/defaults.py says so)


def trials_to_advise(rows: int, alpha: float) -> int:
    """The trials per environment x benchmark to advise for `rows` compared rows at alpha."""
    need = blocks_for_a_difference(rows, alpha) if rows > 0 else None
    return max(PUBLISHED_TRIALS, need or 0)


def advice_text(trials: int) -> str:
    """The advice for `trials` (a trials_to_advise figure) in words, with its flag."""
    why = ("as the published studies did" if trials == PUBLISHED_TRIALS else
           "so that a lone difference among this run's rows can survive the correction")
    return f"run {trials} trials (--trials {trials}) {why}"
