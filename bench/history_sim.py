#!/usr/bin/env python3
"""How often does `virtbench history` cry wolf, and how many runs does it need to see a step?

Series of runs built from this host's measured noise, read by the very functions the command
uses (virtbench/foundations/stats/changes.py: detect, then settle for the family's correction):

1. Noise. Per metric, the per-trial CV and the correlation of a block's pair (rho) measured
   on this host by bench/precision.py in real A/A runs of our quick kernels (quiet host,
   sequential blocks; docs/results/precision.md, "Per metric"), and one loaded profile
   (CV 25 %, rho 0.5: the same page's runs beside other sessions' TCG guests, per-trial CV
   20-34 %). stats.simulate.NoiseModel draws each run's blocks (environment and reference,
   log-normal, that CV and rho).
2. A run's point is what the analysis makes of it: a ratio series the geometric mean of its
   blocks' ratios (the paired estimate), a value series the trimmed mean of the
   environment's samples. The model has no drift of the host between runs: a ratio series
   cancels it on a real host, a value series does not (its figures here are a best case).
3. A/A: 20-run series with no change; a false change is a confirmed change anywhere in the
   series (drift search); and the same series with a fact change at run 10 that changes
   nothing (the before/after test, Holm over --family fact points: the first step of Holm
   for the one that moved, p < alpha / family).
4. Steps of 5, 10 and 20 % (the environment slower from run 10 on): after each new run
   (1 to 10 runs after the step) the series so far is read; found = a confirmed change at
   the step (within one run of it) on the slow side. Runs needed: the first count of runs
   after at which it is found. Both ways: the step at a fact change (tested there) and
   without one (found by the drift search).

    .venv/bin/python bench/history_sim.py                     # docs/history.md's figures
    .venv/bin/python bench/history_sim.py --series 100 --blocks 5   # quick runs (5 trials)
    .venv/bin/python bench/history_sim.py --calibrate --series 600   # false changes per penalty
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from virtbench.foundations.stats import changes  # noqa: E402
from virtbench.foundations.stats.describe import trimmed_mean  # noqa: E402
from virtbench.foundations.stats.simulate import NoiseModel, draw  # noqa: E402

# docs/results/precision.md, "Per metric" (sequential blocks, quiet host, 2026-11-25):
# metric -> (per-trial CV, pair correlation rho)
MEASURED = {
    "himeno.mflops": (0.041, 0.40),
    "pi.seconds": (0.064, 0.19),
    "stream.add_mb_s": (0.089, 0.73),
    "stream.copy_mb_s": (0.105, 0.74),
    "stream.scale_mb_s": (0.078, 0.74),
    "stream.triad_mb_s": (0.089, 0.75),
}
LOADED = {"loaded host (CV 25 %, rho 0.5)": (0.25, 0.50)}

RUNS = 20
STEP_AT = 10
MAX_AFTER = 10
STEPS = (0.05, 0.10, 0.20)


def points(model: NoiseModel, runs: int, blocks: int, kind: str, step: float, seed: int
           ) -> np.ndarray:
    """One series: `runs` points, the environment (1 - step) slower from STEP_AT on."""
    env, ref, _ = draw(model, runs, blocks, 1.0, seed)
    env = env * np.where(np.arange(runs) >= STEP_AT, 1 - step, 1.0)[:, None]
    if kind == "ratio":
        return np.exp(np.mean(np.log(env) - np.log(ref), axis=1))
    return np.array([trimmed_mean(row) for row in env])


def found(y: np.ndarray, facts: list[int], alpha: float) -> tuple[bool, bool]:
    """(a confirmed change at the step on the slow side, any confirmed change) of series y."""
    s = changes.settle([changes.detect(y, facts, True, alpha=alpha)])[0]
    confirmed = [c for c in s.changes if c.status == changes.CONFIRMED]
    hit = any(abs(c.index - STEP_AT) <= 1 and c.direction == "worse" for c in confirmed)
    return hit, bool(confirmed)


@dataclass(frozen=True)
class Cell:
    """One cell of a table: `n` simulated series of `blocks` blocks a run, of one noise model
    and kind (ratio or value), from `seed`; fact points Holm-corrected over `family`."""

    model: NoiseModel
    blocks: int
    kind: str
    n: int
    seed: int
    alpha: float
    family: int

    def alpha_for(self, fact: bool) -> float:
        return self.alpha / self.family if fact else self.alpha


def false_rate(cell: Cell, fact: bool) -> float:
    bad = 0
    for i in range(cell.n):
        y = points(cell.model, RUNS, cell.blocks, cell.kind, 0.0, cell.seed + i)
        bad += found(y, [STEP_AT] if fact else [], cell.alpha_for(fact))[1]
    return bad / cell.n


def runs_needed(cell: Cell, step: float, fact: bool) -> np.ndarray:
    """Per series, runs after the step until found (MAX_AFTER + 1: not within MAX_AFTER)."""
    out = np.full(cell.n, MAX_AFTER + 1)
    for i in range(cell.n):
        y = points(cell.model, STEP_AT + MAX_AFTER, cell.blocks, cell.kind, step, cell.seed + i)
        for k in range(1, MAX_AFTER + 1):
            if found(y[:STEP_AT + k], [STEP_AT] if fact else [], cell.alpha_for(fact))[0]:
                out[i] = k
                break
    return out


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def calibrate(series: int, seed: int) -> None:
    """False changes of A/A series per penalty constant C, per series length. The rate does
    not depend on the noise's size (the search works in units of the series' own sigma), but
    on the series' length (sigma is estimated from fewer differences in a short one): A/A
    series of normal noise, per length."""
    g = np.random.default_rng(seed)
    grid = (3.0, 4.0, 5.0, 6.0, 8.0, 10.0)
    print("| runs | " + " | ".join(f"C = {c:g}" for c in grid) + " |")
    print("|---:|" + "---:|" * len(grid))
    for n in (4, 5, 6, 8, 10, 12, 15, 20, 30, 40):
        hits = np.zeros(len(grid))
        for y in g.standard_normal((series, n)):
            sigma = changes.noise_sigma(y)
            for j, c in enumerate(grid):
                found_at = changes.drift_points(y, 0, n, c * np.log(n) * sigma ** 2)
                bounds = [0, *found_at, n]
                hits[j] += any(changes._moved(y, bounds[i], p, bounds[i + 2])
                               for i, p in enumerate(found_at))
        print(f"| {n} | " + " | ".join(_pct(h / series) for h in hits) + " |", flush=True)


def false_changes_table(args, noise: dict) -> None:
    print("A/A, 20 runs: false confirmed changes per series\n")
    print("| noise | CV % | rho | ratio, no fact | ratio, fact at run 10 | value, no fact |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (cv, rho) in noise.items():
        m = NoiseModel(cv, rho)
        r = [false_rate(Cell(m, args.blocks, kind, args.series, args.seed, args.alpha,
                             args.family), fact)
             for kind, fact in (("ratio", False), ("ratio", True), ("value", False))]
        print(f"| {name} | {100 * cv:.1f} | {rho:.2f} | " + " | ".join(map(_pct, r)) + " |",
              flush=True)


def steps_table(args, noise: dict) -> None:
    print("\nSteps on ratio series: found within 3 runs after the step (median runs "
          "needed; not found within 10)\n")
    print("| noise | step | at a fact change | no fact (drift search) |")
    print("|---|---:|---:|---:|")
    for name, (cv, rho) in noise.items():
        cell = Cell(NoiseModel(cv, rho), args.blocks, "ratio", args.series, args.seed + 7,
                    args.alpha, args.family)
        for step in STEPS:
            cells = []
            for fact in (True, False):
                need = runs_needed(cell, step, fact)
                cells.append(f"{_pct(np.mean(need <= 3))} ({np.median(need):g}; "
                             f"{_pct(np.mean(need > MAX_AFTER))})")
            print(f"| {name} | {100 * step:.0f} % | " + " | ".join(cells) + " |", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=200, help="simulated series per cell")
    ap.add_argument("--blocks", type=int, default=12, help="blocks (trials) per run")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--family", type=int, default=12,
                    help="fact points corrected together (Holm), e.g. 6 metrics x value/ratio")
    ap.add_argument("--seed", type=int, default=32)
    ap.add_argument("--calibrate", action="store_true",
                    help="false changes of A/A ratio series per penalty constant")
    args = ap.parse_args()
    t0 = time.monotonic()
    if args.calibrate:
        calibrate(args.series, args.seed)
        return 0
    print(f"{args.series} series per cell, {args.blocks} blocks per run, alpha {args.alpha}, "
          f"Holm over {args.family} fact points, penalty C {changes.PENALTY_C:g}\n")
    noise = {**MEASURED, **LOADED}
    false_changes_table(args, noise)
    steps_table(args, noise)
    print(f"\n{time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
