#!/usr/bin/env python3
"""How precise are virtbench's figures on this machine, and what can its test see?

1. Runs our stream, himeno and pi kernels natively, `--trials` times each (interleaved, so
   drift lands on all of them), at the quick sizes by default (--full: the seed's sizes),
   straight from the benchmark classes (the argv they build, the parser they use).
2. Prints per metric:
   - CV: sample standard deviation / mean over the trials;
   - A/A false alarms: `--repeats` times, the measured samples are split at random into two
     halves (6 vs 6 with 12 trials) and the two halves compared with virtbench's test (the
     permutation test of the trimmed means); an alarm is p < alpha. Nothing differs between
     the halves, so every alarm is a false one; expect about alpha x repeats;
   - detection of an injected 5 % and 10 % slowdown: the same random splits, one half's
     real samples made 5 % / 10 % worse (throughput x 0.95, time x 1.05); detected = p < alpha
     and the change is in the slowed direction.
   Resampling the measured samples (rather than measuring 20 x 2 fresh sets) keeps it to a
   few minutes; it is the real trial-to-trial noise of this host, but the repeats share
   samples, so they are not independent: read x/20 as a rate, not as 20 experiments.

    .venv/bin/python bench/precision.py                     # 12 trials, 20 repeats, quick sizes
    .venv/bin/python bench/precision.py --trials 24 --repeats 50 --alpha 0.01
    .venv/bin/python bench/precision.py --bench pi --trials 6 --repeats 5   # a smoke check
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from virtbench import kernels, stats  # noqa: E402
from virtbench.benchmarks.cpu import Himeno, Pi  # noqa: E402
from virtbench.benchmarks.memory import Stream  # noqa: E402

BENCHES = {"stream": Stream, "himeno": Himeno, "pi": Pi}
SLOWDOWNS = (0.05, 0.10)


class HostKernels:
    """Just what the benchmarks' argv needs: where a kernel binary is."""

    def __init__(self, directory: Path):
        self.directory = directory

    def kernel_path(self, name: str) -> str:
        return str(self.directory / name)


def measure(names: list[str], trials: int, full: bool, out=sys.stderr) -> dict[str, dict]:
    """{metric label: {"hib": bool, "samples": [...]}} from `trials` interleaved runs."""
    env = HostKernels(kernels.build())
    plans = {n: (BENCHES[n](), BENCHES[n]().params(quick=not full)) for n in names}
    found: dict[str, dict] = {}
    for t in range(trials):
        for name, (bench, params) in plans.items():
            argv = bench.argv(params, env)
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=bench.timeout(params))
            if proc.returncode != 0:
                raise SystemExit(f"{name}: {' '.join(argv)} failed: {proc.stderr.strip()[-300:]}")
            for metric, value in bench.parse(proc.stdout).items():
                m = next(x for x in bench.metrics if x.name == metric)
                found.setdefault(f"{name}.{metric}", {"hib": m.higher_is_better, "samples": []})
                found[f"{name}.{metric}"]["samples"].append(value)
        print(f"  trial {t + 1}/{trials} done", file=out, flush=True)
    return found


def slowed(samples: np.ndarray, fraction: float, hib: bool) -> np.ndarray:
    """The same samples made `fraction` worse on the metric's own scale."""
    return samples * (1 - fraction) if hib else samples * (1 + fraction)


def alarms(samples, hib: bool, repeats: int, alpha: float, seed: int = 0) -> dict[str, int]:
    """Counts over `repeats` random half/half splits of the samples: A/A p < alpha, and
    detections of each injected slowdown (p < alpha, in the slowed direction)."""
    a = np.asarray(samples, dtype=float)
    rng = np.random.default_rng(seed)
    half = a.size // 2
    counts = {"aa": 0, **{f"slow{int(f * 100)}": 0 for f in SLOWDOWNS}}
    for r in range(repeats):
        idx = rng.permutation(a.size)
        x, y = a[idx[:half]], a[idx[half:2 * half]]
        p = stats.permutation_p_value(x, y, seed=r)
        counts["aa"] += p is not None and p < alpha
        for f in SLOWDOWNS:
            z = slowed(y, f, hib)
            p = stats.permutation_p_value(z, x, seed=r)
            worse = (stats.trimmed_mean(z) < stats.trimmed_mean(x)) == hib
            counts[f"slow{int(f * 100)}"] += p is not None and p < alpha and worse
    return counts


def table(found: dict[str, dict], repeats: int, alpha: float) -> list[str]:
    head = (f"{'metric':<22} {'n':>3} {'CV %':>6} {'A/A alarms':>11} "
            + " ".join(f"{f'{int(f * 100)} % detected':>14}" for f in SLOWDOWNS))
    lines = [head, "-" * len(head)]
    for label, d in found.items():
        cv = stats.cv(d["samples"])
        c = alarms(d["samples"], d["hib"], repeats, alpha)
        lines.append(f"{label:<22} {len(d['samples']):>3} {cv * 100 if cv is not None else float('nan'):>6.2f} "
                     f"{c['aa']:>4}/{repeats:<6} "
                     + " ".join(f"{c[f'slow{int(f * 100)}']:>7}/{repeats:<6}" for f in SLOWDOWNS))
    half = len(next(iter(found.values()))["samples"]) // 2
    lines.append(f"alarm: permutation test of trimmed means, p < {alpha:g}, on random "
                 f"{half} vs {half} splits of the measured trials")
    if not stats.can_reach(half, half, alpha):
        lines.append(f"note: {half} vs {half} can never reach p < {alpha:g} (smallest p "
                     f"{stats.min_p_value(half, half):.3g}); use --trials "
                     f"{2 * stats.trials_to_reach(alpha)} or more")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=12, help="native trials per kernel (default 12)")
    ap.add_argument("--repeats", type=int, default=20, help="A/A and injected repeats (default 20)")
    ap.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    ap.add_argument("--bench", action="append", choices=sorted(BENCHES),
                    help="only this kernel (repeatable; default: stream, himeno and pi)")
    ap.add_argument("--full", action="store_true", help="the seed's sizes instead of quick ones")
    args = ap.parse_args(argv)
    if args.trials < 4 or args.repeats < 1 or not 0 < args.alpha < 0.5:
        ap.error("--trials must be at least 4, --repeats at least 1, 0 < --alpha < 0.5")
    found = measure(args.bench or ["stream", "himeno", "pi"], args.trials, args.full)
    print("\n".join(table(found, args.repeats, args.alpha)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
