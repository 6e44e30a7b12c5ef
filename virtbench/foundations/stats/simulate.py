"""A noise model of randomised blocks and simulators of the decisions, for tests and bench/.

NoiseModel draws, per block, one sample of the environment and one of the reference,
log-scale: log x = log(true ratio) + sigma * (sqrt(rho) * common + sqrt(1 - rho) * own),
sigma = sqrt(log(1 + cv^2)) (so a lognormal sample has exactly that CV). `common` is what
the block shares (rho = correlation of the pair, measured here 0.08 to 0.81); `own` is each
run's. tails: "normal"; "t" (Student t with `df` degrees of freedom scaled to unit
variance); outliers: each sample is, with probability outlier_rate, (1 + outlier_size)
times its value (a disturbed run: 20 % slower). The order inside a block is random, and the
one that runs first is (1 + position_pct / 100) times its value (pi: 3 % faster second).

The simulators run thousands of A/A or A/B experiments at once (runs x blocks arrays) and
apply the very functions the analysis uses: stats.paired.t_interval and sign_flip_p with
stats.decision.classify_many for fixed block counts; stats.sequential.sequences and codes for the
adaptive rule. Pure: the seed decides everything.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import log, sqrt

import numpy as np

from . import paired, sequential
from ...core.decisions import Decided
from .decision import CODE, DEFAULT_ALPHA, DEFAULT_THRESHOLD_PCT, classify_many
from .describe import rng

TAILS = ("normal", "t")


@dataclass(frozen=True)
class NoiseModel:
    cv: float = 0.05
    rho: float = 0.0
    tails: str = "normal"
    df: float = 3.0
    outlier_rate: float = 0.0
    outlier_size: float = 0.2
    position_pct: float = 0.0

    def __post_init__(self):
        if self.tails not in TAILS:
            raise ValueError(f"tails {self.tails!r}: use one of {', '.join(TAILS)}")
        if not 0 <= self.rho <= 1:
            raise ValueError(f"rho {self.rho!r}: a correlation between 0 and 1")
        if self.tails == "t" and self.df <= 2:
            raise ValueError("t tails need df > 2 (a finite variance)")


def _unit(model: NoiseModel, g: np.random.Generator, shape) -> np.ndarray:
    if model.tails == "normal":
        return g.standard_normal(shape)
    return g.standard_t(model.df, shape) / sqrt(model.df / (model.df - 2))


def draw(model: NoiseModel, runs: int, blocks: int, ratio: float = 1.0, seed=0):
    """(env, ref, env_first): arrays runs x blocks of positive samples (reference around 1,
    environment around `ratio`) and whether the environment ran first in its block."""
    g = rng(seed)
    shape = (runs, blocks)
    sigma = sqrt(log(1 + model.cv ** 2))
    common = _unit(model, g, shape)
    own_e, own_r = _unit(model, g, shape), _unit(model, g, shape)
    a, b = sqrt(model.rho), sqrt(1 - model.rho)
    log_e = log(ratio) + sigma * (a * common + b * own_e)
    log_r = sigma * (a * common + b * own_r)
    if model.outlier_rate:
        log_e = log_e + log(1 + model.outlier_size) * (g.random(shape) < model.outlier_rate)
        log_r = log_r + log(1 + model.outlier_size) * (g.random(shape) < model.outlier_rate)
    env_first = g.random(shape) < 0.5
    if model.position_pct:
        shift = log(1 + model.position_pct / 100)
        log_e = log_e + shift * env_first
        log_r = log_r + shift * ~env_first
    return np.exp(log_e), np.exp(log_r), env_first


def log_ratios(model: NoiseModel, runs: int, blocks: int, ratio: float = 1.0, seed=0):
    env, ref, _ = draw(model, runs, blocks, ratio, seed)
    return np.log(env) - np.log(ref)


def rates(codes) -> dict[str, float]:
    """Share of each decision among the runs (codes: decision.CODE values)."""
    c = np.asarray(codes)
    return {d: float(np.mean(c == code)) for d, code in CODE.items()}


def fixed_codes(d, alpha: float = DEFAULT_ALPHA, threshold_pct: float = DEFAULT_THRESHOLD_PCT,
                seed=0) -> np.ndarray:
    """The paired fixed-n decision of every run (rows of d) at its full block count."""
    lo, hi = paired.t_interval(d, 1 - alpha)
    eq_lo, eq_hi = paired.t_interval(d, 1 - 2 * alpha)
    p = paired.sign_flip_p(d, seed)
    return classify_many(lo, hi, eq_lo, eq_hi, p < alpha, threshold_pct)


@dataclass(frozen=True)
class Adaptive:
    codes: np.ndarray       # the decision of every run when it stopped (decision.CODE values)
    stopped_at: np.ndarray  # blocks used


def adaptive(d, alpha: float = DEFAULT_ALPHA, threshold_pct: float = DEFAULT_THRESHOLD_PCT,
             min_blocks: int = sequential.DEFAULT_MIN_BLOCKS,
             tight_at: int = sequential.TIGHT_AT, resolve_pct: float | None = None
             ) -> Adaptive:
    """The adaptive rule on every run: look after every block from min_blocks to the last
    column of d (max_blocks), stop at the first block where the row may stop
    (sequential.stop_codes), decide there (sequential.codes)."""
    seq = sequential.sequences(d, alpha, tight_at)
    c = sequential.codes(seq, threshold_pct)[..., min_blocks - 1:]
    stop = sequential.stop_codes(seq, threshold_pct, resolve_pct)[..., min_blocks - 1:] != 0
    first = np.where(stop.any(axis=-1), stop.argmax(axis=-1), c.shape[-1] - 1)
    return Adaptive(np.take_along_axis(c, first[:, None], axis=-1)[:, 0], first + min_blocks)


def naive_repeated_t(d, alpha: float = DEFAULT_ALPHA,
                     min_blocks: int = sequential.DEFAULT_MIN_BLOCKS) -> np.ndarray:
    """What the sequences are for: a fixed-n (1 - alpha) t interval looked at after every
    block from min_blocks on, stopping at the first that excludes 0. True where a run
    claimed a difference."""
    n = d.shape[-1]
    hit = np.zeros(d.shape[0], dtype=bool)
    for k in range(min_blocks, n + 1):
        lo, hi = paired.t_interval(d[:, :k], 1 - alpha)
        hit |= (lo > 0) | (hi < 0)
    return hit


# The scenarios of docs/decisions.md: A/A noise models, and the changes to detect.
AA_MODELS = {
    "normal, CV 5 %, rho 0": NoiseModel(cv=0.05, rho=0.0),
    "normal, CV 10 %, rho 0": NoiseModel(cv=0.10, rho=0.0),
    "normal, CV 10 %, rho 0.8": NoiseModel(cv=0.10, rho=0.8),
    "t(3), CV 7 %, rho 0": NoiseModel(cv=0.07, rho=0.0, tails="t"),
    "t(3), CV 7 %, rho 0.8": NoiseModel(cv=0.07, rho=0.8, tails="t"),
    "CV 5 % + 5 % outliers of +20 %, rho 0": NoiseModel(cv=0.05, outlier_rate=0.05),
    "CV 5 % + 5 % outliers of +20 %, rho 0.8": NoiseModel(cv=0.05, rho=0.8, outlier_rate=0.05),
    "CV 5 %, rho 0.4, first in block +3 %": NoiseModel(cv=0.05, rho=0.4, position_pct=3.0),
}
DIFFERENCE = (CODE[Decided.DIFFERS], CODE[Decided.FAIL])  # the decisions that claim a difference
EQUIVALENT = (CODE[Decided.PASS], CODE[Decided.DIFFERS])   # the decisions that claim the band


def claim_rate(codes) -> float:
    return float(np.isin(np.asarray(codes), DIFFERENCE).mean())


def false_alarms(model: NoiseModel, runs: int = 4000, seed=0, alpha: float = DEFAULT_ALPHA,
                 fixed=(6, 12, 30), max_blocks: int = sequential.DEFAULT_MAX_BLOCKS
                 ) -> dict[str, float]:
    """A/A: the share of runs claiming a difference, at fixed block counts, under the
    adaptive rule, and for naive repeated t tests (stopping at the first p < alpha)."""
    d = log_ratios(model, runs, max_blocks, 1.0, seed)
    out = {f"n={n}": claim_rate(fixed_codes(d[:, :n], alpha, seed=seed)) for n in fixed}
    out["adaptive"] = claim_rate(adaptive(d, alpha).codes)
    out["naive t"] = float(naive_repeated_t(d, alpha).mean())
    return out


def detection(model: NoiseModel, ratio: float, runs: int = 4000, seed=0,
              alpha: float = DEFAULT_ALPHA, within: int = 30,
              max_blocks: int = sequential.DEFAULT_MAX_BLOCKS,
              resolve_pct: float | None = None) -> dict[str, float]:
    """A/B with a true ratio: the adaptive rule's decisions taken within `within` blocks (with
    the resolution `resolve_pct` when given: a difference under the threshold is seen as
    "differs" only by a run that asks one), the share whose (1 - alpha) sequence excludes 1
    by then, and fixed-n at `within` blocks."""
    d = log_ratios(model, runs, max_blocks, ratio, seed)
    a = adaptive(d, alpha, resolve_pct=resolve_pct)
    early = a.stopped_at <= within
    seq = sequential.sequences(d[:, :within], alpha)
    out = {f"adaptive {d} by {within}": float(np.mean(early & (a.codes == code)))
           for d, code in CODE.items() if d is not Decided.INCONCLUSIVE}
    out[f"adaptive detected by {within}"] = float(np.mean(early & np.isin(a.codes, DIFFERENCE)))
    out[f"sequence excludes 1 at {within}"] = float(np.mean((seq.lo[:, -1] > 0) | (seq.hi[:, -1] < 0)))
    out[f"fixed n={within} detected"] = claim_rate(fixed_codes(d[:, :within], alpha, seed=seed))
    out["mean blocks"] = float(a.stopped_at.mean())
    return out


def summary_table(runs: int = 4000, seed=0) -> str:
    """The figures of docs/decisions.md, as text."""
    lines = [f"A/A: share of {runs} runs claiming a difference (fail or differs), alpha 0.05",
             "model | n=6 | n=12 | n=30 | adaptive 6..60 | naive repeated t 6..60"]
    for i, (name, model) in enumerate(AA_MODELS.items()):
        r = false_alarms(model, runs, seed + i)
        lines.append(f"{name} | {r['n=6']:.3f} | {r['n=12']:.3f} | {r['n=30']:.3f} | "
                     f"{r['adaptive']:.3f} | {r['naive t']:.3f}")
    lines += ["", "A/B, adaptive (6..60 blocks), normal noise CV 5 % per member:",
              "change | rho | detected by 30 | fail by 30 | sequence excludes 1 at 30 | "
              "fixed n=30 detected | mean blocks"]
    for i, ratio in enumerate((1.05, 1.10, 1.20)):
        for j, rho in enumerate((0.0, 0.3, 0.5, 0.8)):
            r = detection(NoiseModel(cv=0.05, rho=rho), ratio, runs, seed + 10 * i + j)
            lines.append(f"+{(ratio - 1) * 100:.0f} % | {rho:g} | {r['adaptive detected by 30']:.3f} | "
                         f"{r['adaptive fail by 30']:.3f} | {r['sequence excludes 1 at 30']:.3f} | "
                         f"{r['fixed n=30 detected']:.3f} | {r['mean blocks']:.1f}")
    lines += ["", "A/A, adaptive: decided pass within 60 blocks, mean blocks used:"]
    for cv_ in (0.05, 0.10):
        for rho in (0.0, 0.5):
            a = adaptive(log_ratios(NoiseModel(cv=cv_, rho=rho), runs, 60, 1.0, seed))
            lines.append(f"CV {cv_ * 100:.0f} %, rho {rho:g} | "
                         f"pass {np.mean(a.codes == CODE[Decided.PASS]):.3f} | "
                         f"{a.stopped_at.mean():.1f} blocks")
    lines += ["", "True ratio on the edge (1.10): a pass or differs claim is an error:"]
    for cv_ in (0.02, 0.05):
        d = log_ratios(NoiseModel(cv=cv_), runs, 60, 1.10, seed)
        lines.append(f"CV {cv_ * 100:.0f} % | "
                     f"n=12 {np.isin(fixed_codes(d[:, :12]), EQUIVALENT).mean():.3f} | "
                     f"adaptive {np.isin(adaptive(d).codes, EQUIVALENT).mean():.3f}")
    return "\n".join(lines)
