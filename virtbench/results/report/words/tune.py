"""How a tune is said (docs/tune.md): a knob's decision, the recommendation and its
confirmation, and the tune's headline. Pure; the change itself is said by change.py's rule.

The headline, as a specification: "recommended: K=L, ...: <the confirmation's change> on
<benchmark> <its interval>, <confirmed | not confirmed (<verdict>) | not yet confirmed
(>= N blocks would decide) | not confirmed yet (the A/B has not run)>" (then "; the base
already has K=L" for knobs that matter whose better level the base has), or "keep the base:
it already has the better level of what matters (K=L)", or "keep the base: no knob matters
on <metric>"; then, for every other knob of the metric it is said on, "K: no effect
(within ±M %)" or "K: undecided (>= N blocks would decide)" (or "(more blocks would
decide)" when that count is unknown).
"""
from __future__ import annotations

from ....core.decisions import Decided, Direction, KnobEffect
from ....foundations.model.decision import VsReference
from ....foundations.model.tune import TuneEffect, TuneStep
from .change import said

CONFIRMED, NOT_CONFIRMED, NOT_YET = "confirmed", "not confirmed", "not yet confirmed"


def knob_words(effect: TuneEffect, min_effect_pct: float, unit: str,
               higher_is_better: bool) -> str:
    """"cpus: matters, 2 is 2.00× faster [1.90, 2.10]", "mem: no effect (within ±5 %)",
    "runtime: undecided (>= 14 blocks would decide)"."""
    if effect.decision == KnobEffect.NO_EFFECT:
        return f"{effect.knob}: no effect (within ±{min_effect_pct:g} %)"
    if effect.decision == KnobEffect.UNDECIDED:
        return f"{effect.knob}: undecided ({needed(effect.blocks_needed)})"
    first, second = (effect.levels + ["", ""])[:2]
    better = effect.better_level or second
    ratio, low, high = (1 + effect.effect_pct / 100, 1 + effect.low_pct / 100,
                        1 + effect.high_pct / 100)
    if better == first:                       # said from the second level to the first
        ratio, low, high = 1 / ratio, 1 / high, 1 / low
    change = said(ratio, higher_is_better, unit)
    shown = f"{effect.knob}={better}" if effect.levels else effect.knob
    return (f"{effect.knob}: matters, {shown} is {change.sentence()} "
            f"{change.interval(low, high, higher_is_better)}").rstrip()


def needed(blocks: int | None) -> str:
    return (f">= {blocks} blocks would decide" if blocks is not None
            else "more blocks would decide")


def confirmation_state(vs: VsReference | None) -> str:
    """confirmed: the A/B's verdict is beyond the band on the better side; not confirmed:
    any other decided verdict; not yet confirmed: inconclusive (or no A/B)."""
    if vs is None or vs.verdict == Decided.INCONCLUSIVE:
        return NOT_YET
    if vs.verdict == Decided.FAIL and vs.direction == Direction.BETTER:
        return CONFIRMED
    return NOT_CONFIRMED


def confirmation_words(vs: VsReference | None, benchmark: str, unit: str,
                       higher_is_better: bool) -> str:
    """"1.38× faster on cdm [1.31, 1.45], confirmed"."""
    if vs is None:
        return "not confirmed yet (the A/B has not run)"
    change = said(vs.ratio, higher_is_better, unit)
    interval = change.interval(vs.ratio_ci_low, vs.ratio_ci_high, higher_is_better)
    state = confirmation_state(vs)
    if state == NOT_YET:
        state = f"{NOT_YET} ({needed(vs.trials_needed)})"
    elif state == NOT_CONFIRMED:
        state = f"{NOT_CONFIRMED} ({vs.verdict})"
    return f"{change.sentence()} on {benchmark} {interval}, {state}".replace("  ", " ")


def headline(recommended: dict[str, str], confirmation: str, others: list[str],
             metric: str, kept: dict[str, str] | None = None) -> str:
    """The tune in one sentence (module docstring)."""
    kept_text = ", ".join(f"{k}={v}" for k, v in (kept or {}).items())
    if recommended:
        shown = ", ".join(f"{k}={v}" for k, v in recommended.items())
        first = f"recommended: {shown}: {confirmation}"
        if kept_text:
            first += f"; the base already has {kept_text}"
    elif kept_text:
        first = f"keep the base: it already has the better level of what matters ({kept_text})"
    else:
        first = f"keep the base: no knob matters on {metric}"
    return "; ".join([first, *others])


def step_words(step: TuneStep, unit: str, higher_is_better: bool) -> str:
    """"queues=4 (r1) against r0: 3.1 % faster [-6.0, -0.2]: kept r0" or "...: the new best"
    or "...: not run yet"."""
    head = f"{step.knob}={step.level} ({step.environment}) against {step.reference}"
    vs = step.vs_best
    if step.moved is None or vs is None:
        return f"{head}: not run yet" if step.moved is None else f"{head}: no ratio"
    change = said(vs.ratio, higher_is_better, unit)
    interval = change.interval(vs.ratio_ci_low, vs.ratio_ci_high, higher_is_better)
    outcome = "the new best" if step.moved else f"kept {step.reference}"
    return f"{head}: {change.sentence()} {interval}: {outcome}".replace("  ", " ")
