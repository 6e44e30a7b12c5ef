#!/usr/bin/env python3
"""Is `virtbench tune` right when the truth is known? Its decisions and recommendation on
simulated screenings with this host's noise.

Each scenario: k knobs (4, 6, 8), one with a true 10 % effect, one with 5 % (exactly the
smallest effect that matters: on the band's edge), the rest none; the screening design
virtbench runs for k knobs (stats/screening/design.py), every configuration once per block,
B blocks; each trial's value log-normal around its configuration's true value with
stats.simulate.NoiseModel's noise (per-trial CV; a block's common component with
correlation rho, which the fit's block terms take out: rho 0 is the worst case). Then the
analysis's own functions (stats/screening/effects.py: fit, recommend) decide, through
stats/screening/simulate.py. Reported per scenario, over --runs simulations:
- false "matters": the share of null knobs decided "matters" (target <= 5 %);
- 10 % "matters": the share of simulations that find the 10 % knob (target >= 90 %);
- 5 % "matters": the same for the knob on the edge (an effect of exactly min_effect);
- null "no effect": the share of null knobs decided "no effect" (the equivalence reached);
- within 5 %: the share whose recommended configuration (knobs left out at the base's
  level, every knob's first level) is TRUE-ly within 5 % of the full factorial's true best
  (target >= 90 %); and the mean true loss;
- design / full: configurations per block of the design against the full factorial
  (target <= 1/4 for k >= 6; the tune also runs the base as reference in every block).
With --scan, per k, the fewest blocks at which the 10 % knob is found in >= 90 % of
simulations (looked for one block at a time from a normal approximation's guess).

    .venv/bin/python bench/tune_simulation.py --scan                # docs/results/tune-simulation.md
    .venv/bin/python bench/tune_simulation.py --runs 50 --knobs 6   # a quick look
    .venv/bin/python bench/tune_simulation.py --cv 0.058 --json /tmp/tune-sim.json
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from math import ceil, log
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from virtbench.foundations.stats.screening import effects as fx  # noqa: E402
from virtbench.foundations.stats.screening.simulate import ScreeningTruth, simulate  # noqa: E402
from virtbench.foundations.stats.simulate import NoiseModel  # noqa: E402

# pi.seconds, per-trial CV measured on this host, 2026-11-29 (docs/results/tune-simulation.md):
# `virtbench run --env native --bench pi --bench stream --quick --trials 12`, run
# 20261129-122944-b4fc, 7.5 % (another of 6 trials minutes before: 5.8 %; the quiet host of
# docs/results/precision.md: 6.4 %, rho 0.19)
MEASURED_CV = 0.075
BIG, EDGE = 10.0, 5.0            # the true effects, %
TARGETS = {"false_matters": 0.05, "detect_10": 0.90, "within_5": 0.90, "fraction": 0.25}
TOLERANCE = 1e-9                 # a loss of exactly 5 % (the 5 % knob left out) is within 5 %


def scenario(k: int, blocks: int, args) -> dict:
    """One scenario's figures (the module docstring's columns)."""
    truth = ScreeningTruth((BIG, EDGE) + (0.0,) * (k - 2), NoiseModel(args.cv, args.rho),
                           blocks, fx.EffectQuestion(True, args.alpha, args.min_effect))
    t0 = time.monotonic()
    out = simulate(truth, args.runs, args.seed + 100 * k + blocks)
    nulls = range(2, k)
    return {"knobs": k, "blocks": blocks, "runs": args.runs,
            "configurations": out.configurations, "full_factorial": out.full_factorial,
            "fraction": out.configurations / out.full_factorial,
            "false_matters": out.share(fx.MATTERS, nulls),
            "detect_10": out.share(fx.MATTERS, [0]),
            "detect_5": out.share(fx.MATTERS, [1]),
            "null_no_effect": out.share(fx.NO_EFFECT, nulls),
            "within_5": float((out.loss_pct <= 5 + TOLERANCE).mean()),
            "mean_loss_pct": float(out.loss_pct.mean()),
            "seconds": time.monotonic() - t0}


def met(row: dict) -> str:
    """The targets this row meets (F false matters, D detection, R recommendation, C
    configurations; C only asked for k >= 6)."""
    marks = [("F", row["false_matters"] <= TARGETS["false_matters"]),
             ("D", row["detect_10"] >= TARGETS["detect_10"]),
             ("R", row["within_5"] >= TARGETS["within_5"])]
    if row["knobs"] >= 6:
        marks.append(("C", row["fraction"] <= TARGETS["fraction"]))
    return " ".join(f"{name}{'✓' if ok else '✗'}" for name, ok in marks)


HEADER = ("| k | blocks | design / full | trials | false \"matters\" (null) | 10 % \"matters\" "
          "| 5 % \"matters\" | null \"no effect\" | within 5 % of best | mean loss | targets "
          "| s |\n|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")


def line(row: dict) -> str:
    def pct(x):
        return f"{100 * x:.1f} %"
    return (f"| {row['knobs']} | {row['blocks']} | {row['configurations']}/"
            f"{row['full_factorial']} | {row['configurations'] * row['blocks']} | "
            f"{pct(row['false_matters'])} | {pct(row['detect_10'])} | {pct(row['detect_5'])} | "
            f"{pct(row['null_no_effect'])} | {pct(row['within_5'])} | "
            f"{row['mean_loss_pct']:.2f} % | {met(row)} | {row['seconds']:.0f} |")


def guess(k: int, args) -> int:
    """Where to start looking: the blocks at which a normal approximation of the interval
    (Bonferroni over k, the fit's block terms taking rho's share out) finds the 10 % knob in
    90 %. Only a starting point: the figures are the simulations'."""
    from statistics import NormalDist
    from virtbench.foundations.stats.screening.design import two_level
    sigma2 = log(1 + args.cv ** 2) * (1 - args.rho)
    z = NormalDist().inv_cdf(1 - args.alpha / (2 * k)) + NormalDist().inv_cdf(0.9)
    gap = log(1 + BIG / 100) - log(1 + args.min_effect / 100)
    rows = len(two_level([f"k{i}" for i in range(k)]).rows)
    return max(2, ceil(4 * sigma2 * z * z / (gap * gap * rows)))


def scan(k: int, args) -> list[dict]:
    """The fewest blocks (at most --max-blocks) at which the 10 % knob is found in >= 90 %
    of --scan-runs simulations: from guess() one block at a time, down while found, up
    while not."""
    runs = argparse.Namespace(**{**vars(args), "runs": args.scan_runs})
    rows, blocks = [], min(guess(k, args), args.max_blocks)
    while 2 <= blocks <= args.max_blocks:
        rows.append(scenario(k, blocks, runs))
        print(line(rows[-1]), flush=True)
        found = [r["detect_10"] >= TARGETS["detect_10"] for r in rows]
        if len(set(found)) > 1:
            break
        blocks += -1 if found[-1] else 1
    return sorted(rows, key=lambda r: r["blocks"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=300, help="simulations per scenario")
    ap.add_argument("--knobs", type=int, nargs="+", default=[4, 6, 8])
    ap.add_argument("--blocks", type=int, nargs="+", default=[3, 4, 6])
    ap.add_argument("--cv", type=float, default=MEASURED_CV,
                    help=f"per-trial CV (default {MEASURED_CV}: pi here, 2026-11-29)")
    ap.add_argument("--rho", type=float, default=0.0,
                    help="a block's common share of the noise (default 0: the worst case)")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--min-effect", type=float, default=5.0, help="%% (default 5)")
    ap.add_argument("--scan", action="store_true",
                    help="per k, the blocks at which the 10 %% knob is found in >= 90 %%")
    ap.add_argument("--scan-runs", type=int, default=200, help="simulations per scan step")
    ap.add_argument("--max-blocks", type=int, default=30, help="the scan's last (default 30)")
    ap.add_argument("--seed", type=int, default=40)
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = ap.parse_args()
    t0 = time.monotonic()
    print(f"{args.runs} simulations per scenario; effects 10 % and 5 %, the rest 0; noise CV "
          f"{100 * args.cv:.1f} %, rho {args.rho:g}; alpha {args.alpha:g} (Bonferroni over "
          f"the k knobs), min effect {args.min_effect:g} %\n")
    print(HEADER)
    rows = []
    for k in args.knobs:
        for blocks in args.blocks:
            rows.append(scenario(k, blocks, args))
            print(line(rows[-1]), flush=True)
    scanned = []
    if args.scan:
        print("\nBlocks for the 10 % knob in >= 90 %:\n\n" + HEADER)
        for k in args.knobs:
            scanned += scan(k, args)
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "rows": rows,
                                               "scan": scanned}, indent=1))
    print(f"\n{time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
