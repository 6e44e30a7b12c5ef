"""Effects of a screening's knobs on one metric, each knob decided, and the configuration the
effects recommend (docs/tune.md). Pure.

The rule, as a specification:
- Model: the log of every usable trial's value is fitted by least squares (statsmodels
  OLS) on a constant, one indicator per block but the first (configurations that ran in the
  same block share the block's level of the host), and one column per term: a knob's coded
  level (-1 its first level, +1 its second) / 2, and for each two-knob interaction the
  design resolves the product of the two codes / 2. A term's coefficient b is then its
  effect on the log scale: the mean log at +1 less the mean log at -1; the metric moves by
  (e^b - 1) x 100 % from the first level to the second (`effect_pct`).
- The family is every term of the metric (m of them); the intervals are Bonferroni's, so
  every claim of the family holds together at alpha. The band is +-L with
  L = ln(1 + min_effect / 100) on the log scale (a change of min_effect % either way).
- "matters": the (1 - alpha/m) t interval of b lies wholly beyond the band, on one side.
- "no effect": the (1 - 2 alpha/m) interval lies wholly inside the band (two one-sided
  tests at alpha/m: an equivalence decision, never the mere absence of a difference).
- "undecided": anything else, with `blocks_needed`: with b and the residual spread held,
  the fewest blocks (each block runs every configuration once more) at which the interval
  decides with 80 % probability (stats/decision.py's normal approximation, here with the
  family's multiplier); None when b sits on the band's edge or it would take more than
  MAX_BLOCKS; a term that cannot be estimated (no residual degrees of freedom) is undecided
  with its blocks needed unknown.
- The better level of a term is the one that moves the metric its better way (higher for a
  rate, lower for a time).
- Recommended configuration: the knobs whose main effect or an interaction of theirs
  "matters" are set together to the combination the fitted model predicts best (main
  effects of those knobs and the interactions among them that matter); every other knob
  keeps the base configuration's setting (it is left out of the recommendation).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from math import exp, log

import numpy as np
from scipy import stats as sps

from ....core.decisions import KnobEffect

MATTERS, NO_EFFECT, UNDECIDED = KnobEffect.MATTERS, KnobEffect.NO_EFFECT, KnobEffect.UNDECIDED
DECISIONS = tuple(KnobEffect)
TARGET_POWER = 0.8
MAX_BLOCKS = 1000
MAX_JOINT = 10          # knobs set together by the model's prediction, at most (2^10 rows)


@dataclass(frozen=True)
class EffectQuestion:
    """What a metric's effects are decided by: its direction, the family's alpha and the
    smallest effect that matters, %."""
    higher_is_better: bool
    alpha: float
    min_effect_pct: float


@dataclass(frozen=True)
class Observation:
    """One usable trial's value: configuration `row` of the design, in block `block`."""
    row: int
    block: int
    value: float


@dataclass(frozen=True)
class Term:
    """A main effect (one knob) or a two-knob interaction (two)."""
    knobs: tuple[str, ...]

    @property
    def name(self) -> str:
        return "×".join(self.knobs)


@dataclass(frozen=True)
class Effect:
    """One term's effect on one metric, decided (module docstring)."""
    term: Term
    log_effect: float | None          # b: mean log at +1 less mean log at -1
    se: float | None
    df: int
    effect_pct: float | None          # (e^b - 1) x 100: first level to second
    low_pct: float | None             # the (1 - alpha/m) interval of effect_pct
    high_pct: float | None
    decision: KnobEffect
    better: int | None                # +1: the second level is better; -1: the first
    blocks_needed: int | None
    blocks: int


def fit(rows: list[tuple[int, ...]], knobs: tuple[str, ...], observations: list[Observation],
        interactions: tuple[tuple[str, str], ...], question: EffectQuestion) -> list[Effect]:
    """Every main effect, then every interaction the design resolves, decided."""
    import statsmodels.api as sm
    terms = [Term((k,)) for k in knobs] + [Term(pair) for pair in interactions]
    obs = [o for o in observations if o.value > 0 and np.isfinite(o.value)]
    blocks = sorted({o.block for o in obs})
    n_blocks = len(blocks)
    index = {k: i for i, k in enumerate(knobs)}
    y = np.log([o.value for o in obs]) if obs else np.zeros(0)
    columns = [np.ones(len(obs))]
    columns += [np.array([o.block == b for o in obs], float) for b in blocks[1:]]
    for term in terms:
        columns.append(np.array([np.prod([rows[o.row][index[k]] for k in term.knobs]) / 2
                                 for o in obs], float))
    X = np.column_stack(columns) if obs else np.zeros((0, len(columns)))
    first = 1 + max(n_blocks - 1, 0)
    m = len(terms)
    if len(obs) <= X.shape[1] or np.linalg.matrix_rank(X) < X.shape[1]:
        return [_unestimable(t, n_blocks) for t in terms]
    result = sm.OLS(y, X).fit()
    df = int(result.df_resid)
    out = []
    for j, term in enumerate(terms):
        b, se = float(result.params[first + j]), float(result.bse[first + j])
        out.append(decide(term, b, se, df, m, n_blocks, len(rows), question))
    return out


def decide(term: Term, b: float, se: float, df: int, m: int, blocks: int, configurations: int,
           question: EffectQuestion) -> Effect:
    """One term's decision from its estimate b, its standard error and residual df, in a
    family of m terms (module docstring)."""
    alpha, higher_is_better = question.alpha, question.higher_is_better
    min_effect_pct = question.min_effect_pct
    edge = log(1 + min_effect_pct / 100)
    wide = float(sps.t.ppf(1 - alpha / (2 * m), df))       # (1 - alpha/m) two-sided
    narrow = float(sps.t.ppf(1 - alpha / m, df))            # (1 - 2 alpha/m) two-sided
    lo, hi = b - wide * se, b + wide * se
    if lo > edge or hi < -edge:
        decision = MATTERS
    elif -edge < b - narrow * se and b + narrow * se < edge:
        decision = NO_EFFECT
    else:
        decision = UNDECIDED
    need = (None if decision != UNDECIDED
            else blocks_needed(b, se, blocks, configurations, df, m, alpha, edge))
    better = None if b == 0 else (1 if (b > 0) == higher_is_better else -1)
    return Effect(term, b, se, df, _pct(b), _pct(lo), _pct(hi), decision, better, need, blocks)


def blocks_needed(b: float, se: float, blocks: int, configurations: int, df: int, m: int,
                  alpha: float, edge: float) -> int | None:
    """The fewest blocks at which the term's interval decides with TARGET_POWER probability,
    b and the spread held (module docstring); None past MAX_BLOCKS or on the edge."""
    if se <= 0 or abs(abs(b) - edge) < 1e-12:
        return None
    norm = sps.norm.cdf
    n = np.arange(blocks + 1, MAX_BLOCKS + 1)            # every count at once: one ppf call
    s = se * np.sqrt(blocks / n)
    d = df + (n - blocks) * (configurations - 1)
    if abs(b) > edge:
        p = norm((abs(b) - edge) / s - sps.t.ppf(1 - alpha / (2 * m), d))
    else:
        c = sps.t.ppf(1 - alpha / m, d)
        p = norm((edge - b) / s - c) + norm((b + edge) / s - c) - 1
    reached = np.flatnonzero(p >= TARGET_POWER)
    return int(n[reached[0]]) if reached.size else None


def recommend(effects: list[Effect], knobs: tuple[str, ...], higher_is_better: bool
              ) -> dict[str, int]:
    """Knob -> coded level (+-1) of the recommended configuration; knobs left out keep the
    base's setting (module docstring). The model is additive but for the interactions that
    matter: a knob in none of them is set by its main effect alone; the knobs joined by them
    are set together, over every combination of their levels (at most MAX_JOINT of them)."""
    mains = {e.term.knobs[0]: e for e in effects if len(e.term.knobs) == 1}
    pairs = [e for e in effects if len(e.term.knobs) == 2 and e.decision == MATTERS]
    joint = [k for k in knobs if any(k in e.term.knobs for e in pairs)][:MAX_JOINT]
    alone = [k for k in knobs if k not in joint and not any(k in e.term.knobs for e in pairs)
             and mains.get(k) and mains[k].decision == MATTERS]
    sign = 1 if higher_is_better else -1
    chosen = {k: (1 if sign * mains[k].log_effect > 0 else -1) for k in alone}
    if joint:
        chosen.update(_joint(joint, mains, pairs, sign))
    return {k: chosen[k] for k in knobs if k in chosen}


def _joint(joint: list[str], mains: dict[str, Effect], pairs: list[Effect], sign: int
           ) -> dict[str, int]:
    """The levels of the knobs joined by interactions that matter the fitted model predicts
    best: their main effects and the interactions among them that matter."""
    inside = [e for e in pairs if set(e.term.knobs) <= set(joint)]

    def predicted(levels: dict[str, int]) -> float:
        total = sum(mains[k].log_effect * levels[k] / 2 for k in joint
                    if mains.get(k) and mains[k].log_effect is not None)
        total += sum(e.log_effect * levels[e.term.knobs[0]] * levels[e.term.knobs[1]] / 2
                     for e in inside)
        return sign * total
    combos = (dict(zip(joint, c)) for c in itertools.product((-1, 1), repeat=len(joint)))
    return max(combos, key=predicted)


def _pct(b: float | None) -> float | None:
    return None if b is None else (exp(b) - 1) * 100


def _unestimable(term: Term, blocks: int) -> Effect:
    return Effect(term, None, None, 0, None, None, None, UNDECIDED, None, None, blocks)
