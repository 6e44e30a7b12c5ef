"""Simulated screenings: how often the tune's decisions and recommendation are right when
the truth is known (bench/tune_simulation.py, docs/results/tune-simulation.md). Pure: the
seed decides everything.

The truth: k knobs "k1".."kk", each with a true main effect (% from its first level to its
second) and optional two-knob interactions (%), on the log scale as effects.py's model has
them: a configuration's true value is exp(sum of b * code / 2 over the terms), b = ln(1 +
pct / 100), code -1 / +1 the knob's level (an interaction's code the product of its two).

The noise: stats.simulate.NoiseModel, read the way its docstring says, with the block's
common component shared by every configuration of the block: log x = true log + sigma *
(sqrt(rho) * common + sqrt(1 - rho) * own), sigma = sqrt(log(1 + cv^2)); its tails and
outliers as there. Position effects (who runs first in a block) are not modelled here: a
model with position_pct is refused.

One simulation: the screening design of design.two_level draws every configuration once per
block, then effects.fit and effects.recommend decide it exactly as the analysis does
(results/analysis/tune.py). Its outcome: each knob's decision (its main effect's), the
recommended configuration (knobs left out keep the base's level: the base is every knob at
its first level, code -1) and how much worse its TRUE value is than the full factorial's
TRUE best (loss_pct: 0 when it is the best; for a rate best / recommended - 1, for a time
recommended / best - 1, in %).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import log, sqrt

import numpy as np

from ..describe import rng
from ..simulate import NoiseModel, _unit
from . import design as dz
from . import effects as fx


@dataclass(frozen=True)
class ScreeningTruth:
    """What a simulated screening measures: true main effects per knob (%), true two-knob
    interactions ((i, j) -> %, knob indices from 0), the noise, blocks and the question."""
    main_pct: tuple[float, ...]
    noise: NoiseModel
    blocks: int
    question: fx.EffectQuestion = fx.EffectQuestion(True, 0.05, 5.0)
    interactions_pct: dict[tuple[int, int], float] = field(default_factory=dict)

    def __post_init__(self):
        k = len(self.main_pct)
        if not 1 <= k <= dz.MAX_KNOBS:
            raise ValueError(f"main_pct has {k} knobs: give 1 to {dz.MAX_KNOBS} effects")
        if any(not np.isfinite(p) or p <= -100 for p in self.main_pct):
            raise ValueError("main_pct: each effect a finite % above -100")
        for (i, j), pct in self.interactions_pct.items():
            if not (0 <= i < k and 0 <= j < k and i != j) or not np.isfinite(pct) or pct <= -100:
                raise ValueError(f"interaction {(i, j)}: two different knob indices below {k}, "
                                 "a finite % above -100")
        if self.blocks < 1:
            raise ValueError(f"blocks {self.blocks}: at least 1")
        q = self.question
        if not 0 < q.alpha < 1 or q.min_effect_pct <= 0:
            raise ValueError("question: alpha between 0 and 1, min_effect_pct above 0")
        if self.noise.position_pct:
            raise ValueError("noise.position_pct: position effects are not modelled here, use 0")

    @property
    def knobs(self) -> tuple[str, ...]:
        return tuple(f"k{i + 1}" for i in range(len(self.main_pct)))

    def true_log(self, codes: np.ndarray) -> np.ndarray:
        """The true log value of configurations (rows of coded levels, +-1)."""
        codes = np.asarray(codes, float)
        b = np.log1p(np.asarray(self.main_pct, float) / 100)
        out = codes @ b / 2
        for (i, j), pct in self.interactions_pct.items():
            out = out + log(1 + pct / 100) * codes[..., i] * codes[..., j] / 2
        return out


@dataclass(frozen=True)
class ScreeningOutcomes:
    """Per simulation: each knob's decision (effects.DECISIONS), the recommended coded levels
    (base -1 for the knobs left out), its loss against the full factorial's true best (%);
    configurations per block of the design and of the full factorial."""
    decisions: np.ndarray           # runs x k, str
    recommended: np.ndarray         # runs x k, +-1
    loss_pct: np.ndarray            # runs
    configurations: int
    full_factorial: int

    def share(self, decision: str, knobs) -> float:
        """The share of (simulation, knob) pairs of these knob indices decided `decision`."""
        return float(np.mean(self.decisions[:, list(knobs)] == decision))


def draw_values(truth: ScreeningTruth, rows: np.ndarray, runs: int, seed=0) -> np.ndarray:
    """runs x blocks x configurations of positive values around each row's true value."""
    g = rng(seed)
    model = truth.noise
    shape = (runs, truth.blocks, len(rows))
    sigma = sqrt(log(1 + model.cv ** 2))
    common = _unit(model, g, (runs, truth.blocks, 1))
    noise = sigma * (sqrt(model.rho) * common + sqrt(1 - model.rho) * _unit(model, g, shape))
    if model.outlier_rate:
        noise = noise + log(1 + model.outlier_size) * (g.random(shape) < model.outlier_rate)
    return np.exp(truth.true_log(rows) + noise)


def simulate(truth: ScreeningTruth, runs: int, seed=0) -> ScreeningOutcomes:
    """`runs` screenings of `truth`, each fitted and recommended as the analysis does."""
    if runs < 1:
        raise ValueError(f"runs {runs}: at least 1")
    knobs, q = truth.knobs, truth.question
    plan = dz.two_level(knobs)
    rows = np.array(plan.rows)
    full_log = truth.true_log(np.array(dz.full(knobs).rows))
    best = full_log.max() if q.higher_is_better else full_log.min()
    values = draw_values(truth, rows, runs, seed)
    decisions = np.empty((runs, len(knobs)), dtype=object)
    recommended = -np.ones((runs, len(knobs)), dtype=int)
    for r in range(runs):
        observations = [fx.Observation(row, block, float(values[r, block, row]))
                        for block in range(truth.blocks) for row in range(len(rows))]
        effects = fx.fit(list(plan.rows), knobs, observations, plan.interactions, q)
        decisions[r] = [e.decision for e in effects[:len(knobs)]]
        for knob, code in fx.recommend(effects, knobs, q.higher_is_better).items():
            recommended[r, knobs.index(knob)] = code
    gap = truth.true_log(recommended) - best
    loss = np.expm1(-gap if q.higher_is_better else gap) * 100
    return ScreeningOutcomes(decisions.astype(str), recommended, loss, len(rows),
                             plan.full_size)
