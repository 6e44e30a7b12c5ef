"""Run B against run A on one metric (`virtbench compare`): the compare verdict worse /
better / same / inconclusive, with the test's power and the trials per side that would
decide. Figures only: report/words/compare.py says it.

The rule (Firecracker's A/B rule plus power), on the change from A to B in % (positive =
B worse) and the permutation p of the trimmed means:
- worse / better: p < alpha and |change| > min-change;
- same: significant but |change| <= min-change, or not significant while the test had
  >= 80 % power to see min-change;
- inconclusive: no test (fewer than 2 samples a side), an alpha no number of trials can
  reach, trial counts whose smallest p is not below alpha, or not significant with too
  little power (the trials per side that would give it 80 %).
`basis` says which case decided (ChangeBasis).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ...core.decisions import CompareVerdict, Direction
from . import significance as sig

COMPARE_ALPHA = 0.01            # `virtbench compare --alpha`
MIN_CHANGE_PCT = 5.0    # `virtbench compare --min-change`


class ChangeBasis(StrEnum):
    """Which case of the rule (module docstring) gave the compare verdict."""

    NO_TEST = "no test"                        # no p: fewer than 2 samples a side
    FEW_SAMPLES = "few samples"                # the counts given: fewer than 2 a side
    ALPHA_UNREACHABLE = "alpha unreachable"    # no number of trials reaches alpha
    COUNTS_UNREACHABLE = "counts unreachable"  # these counts cannot reach alpha
    BEYOND = "beyond"                          # significant and beyond min-change
    WITHIN = "within"                          # significant, within min-change
    POWERED = "powered"                        # not significant, with the power to see it
    NOT_SIGNIFICANT = "not significant"        # not significant, power short or unknown


@dataclass(frozen=True)
class ChangeVerdict:
    """The compare verdict of one change and the figures its words need."""
    verdict: CompareVerdict
    basis: ChangeBasis
    change_pct: float
    p_value: float | None
    alpha: float
    min_change_pct: float
    direction: Direction | None = None
    power: float | None = None          # to see a change of min_change_pct
    trials_needed: int | None = None    # per side, to reach alpha with 80 % power
    n_a: int | None = None
    n_b: int | None = None
    cv_known: bool = True               # the pooled CV could be estimated
    smallest_p: float | None = None     # the test's smallest p (the unreachable cases)


def _undecided(n_a: int, n_b: int, alpha: float, cv_pooled: float | None, change_pct: float
               ) -> tuple[float | None, int | None, ChangeBasis | None, float | None]:
    """(power, trials needed, why not decidable, the test's smallest p) for a change of
    change_pct %."""
    if sig.trials_to_reach(alpha) is None:
        return None, None, ChangeBasis.ALPHA_UNREACHABLE, 2 / (sig.N_PERMUTATIONS + 1)
    if n_a < 2 or n_b < 2:
        return None, sig.trials_to_reach(alpha), ChangeBasis.FEW_SAMPLES, None
    pw = sig.power(n_a, n_b, cv_pooled, change_pct / 100, alpha)
    need = sig.trials_for_power(cv_pooled, change_pct / 100, alpha)
    if not sig.can_reach(n_a, n_b, alpha):
        return (pw, need or sig.trials_to_reach(alpha), ChangeBasis.COUNTS_UNREACHABLE,
                sig.min_p_value(n_a, n_b))
    return pw, need, None, None


def change_verdict(change_pct: float, p_value: float | None, n_a: int | None = None,
                   n_b: int | None = None, cv_pooled: float | None = None,
                   alpha: float = COMPARE_ALPHA,
                   min_change_pct: float = MIN_CHANGE_PCT) -> ChangeVerdict:
    """Run B against run A (module docstring); change_pct positive = B worse. Without the
    trial counts, power and trials needed are not sized."""
    figures = dict(change_pct=change_pct, p_value=p_value, alpha=alpha,
                   min_change_pct=min_change_pct, n_a=n_a, n_b=n_b,
                   cv_known=cv_pooled is not None)
    if p_value is None:
        return ChangeVerdict(CompareVerdict.INCONCLUSIVE, ChangeBasis.NO_TEST,
                             trials_needed=sig.trials_to_reach(alpha), **figures)
    known = n_a is not None and n_b is not None
    pw, need, why, smallest = (_undecided(n_a, n_b, alpha, cv_pooled, min_change_pct)
                               if known else (None, None, None, None))
    if why is not None:
        return ChangeVerdict(CompareVerdict.INCONCLUSIVE, why, power=pw, trials_needed=need,
                             smallest_p=smallest, **figures)
    if p_value < alpha:
        if abs(change_pct) > min_change_pct:
            side = Direction.WORSE if change_pct > 0 else Direction.BETTER
            return ChangeVerdict(CompareVerdict(side), ChangeBasis.BEYOND, direction=side,
                                 power=pw, **figures)
        return ChangeVerdict(CompareVerdict.SAME, ChangeBasis.WITHIN, power=pw, **figures)
    if pw is not None and pw >= sig.TARGET_POWER:
        return ChangeVerdict(CompareVerdict.SAME, ChangeBasis.POWERED, power=pw, **figures)
    return ChangeVerdict(CompareVerdict.INCONCLUSIVE, ChangeBasis.NOT_SIGNIFICANT, power=pw,
                         trials_needed=need, **figures)
