#!/usr/bin/env python3
"""How often does virtbench cry wolf on this host, and how often does it see a real change?

Measured with independent runs, never by re-splitting one sample set: every figure comes from
blocks no other run of the same method used.

1. Real virtbench runs, through the Runner (its randomised blocks, calibrated repetitions of
   short sections, disturbed-trial marks), natively, of our quick kernels (pi, stream,
   himeno at --quick sizes), on a private store, bounded in time (--budget):
   - sequential: four native environments in randomised blocks: `native` (the reference),
     `native/twin` (the same: an A/A comparison), `native/slow5` and `native/slow10`, whose
     kernels run with VIRTBENCH_INJECT_SLOWDOWN=0.05 / 0.10 in their environment: our
     kernels then lengthen every measured section by that fraction of the CPU time its work
     took (kernels/common.h), a known 5 % and 10 % slowdown (tests/unit/kernels/test_inject.py);
   - duet: the same three comparisons, each its own run in duet mode (the pair measured at
     once on the two CPUs, virtbench/execution/run/duet.py).
2. Each run's blocks are cut into consecutive, disjoint stretches, each one independent run
   of a method, per (comparison, metric) row, disturbed trials left out as the analysis
   does:
   - unpaired 12: 12 blocks, trimmed means, permutation p (stats.decision.decide_unpaired);
   - paired 12: the same 12 blocks as pairs, sign-flip p (stats.decision.decide_paired);
   - adaptive: from the stretch's start, the runner's stopping rule (stats.sequential: stop
     when decided, at most --within blocks), anytime-valid p where it stopped; the next run
     starts after it (the rule looks at one row's blocks only, so this is the run the
     runner's loop makes of that row);
   - duet 12 / duet adaptive: the same on the duet runs' blocks.
   A/A: a false alarm is p < alpha (a difference claimed). 5 % / 10 %: detected is p < alpha
   with the estimate on the slow side. "blocks" is what a run of the method spends.
3. The same rates from 4,000 simulated runs with this host's noise (stats.simulate's
   NoiseModel with the CV and the within-block correlation measured in step 1, normal tails).

    .venv/bin/python bench/precision.py --budget 30m       # docs/results/precision.md's figures (default 50m)
    .venv/bin/python bench/precision.py --budget 3m --bench pi    # a smoke check
"""
from __future__ import annotations

import argparse
import contextlib
import io
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from math import exp, log, sqrt
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402

from virtbench.measure import benchmarks  # noqa: E402
from virtbench.measure.environments.native import Native  # noqa: E402
from virtbench.measure.environments.spec import EnvSpec  # noqa: E402
from virtbench.execution.run.runner import Prepared, Runner  # noqa: E402
from virtbench.foundations.stats import decision, paired, sequential, simulate  # noqa: E402
from virtbench.foundations.stats.simulate import NoiseModel, draw  # noqa: E402
from virtbench.foundations.store import Store  # noqa: E402
from virtbench.study.design import BenchmarkCase, EnvironmentEntry, Study  # noqa: E402
from virtbench.study.schema import duration_s  # noqa: E402

REF = "native"
COMPARISONS = {"twin": 0.0, "slow5": 0.05, "slow10": 0.10}     # name -> injected slowdown
METHODS = ("unpaired 12", "paired 12", "adaptive", "duet 12", "duet adaptive")
FIXED = 12


class Injected(Native):
    """`native:name=NAME` whose commands run with VIRTBENCH_INJECT_SLOWDOWN=fraction."""

    def __init__(self, name: str, fraction: float):
        super().__init__(EnvSpec("native", {"name": name}))
        self.fraction = fraction

    def exec(self, argv, timeout, env=None):
        extra = {"VIRTBENCH_INJECT_SLOWDOWN": f"{self.fraction:g}"} if self.fraction else {}
        return super().exec(argv, timeout, {**(env or {}), **extra})


# -- measuring: real runs ---------------------------------------------------------------------
@contextlib.contextmanager
def alarm(seconds: float):
    """KeyboardInterrupt after `seconds`: the runner then ends the run cleanly (stored trials
    kept, environments stopped); a block it was in the middle of is left incomplete."""
    def ring(signum, frame):
        raise KeyboardInterrupt("budget")
    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, max(1.0, seconds))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def measure(store: Store, comparisons: list[str], benches: list[str], seconds: float,
            duet: bool, seed: int, min_section: float) -> str:
    """One real virtbench run of `native` and the comparisons' environments for about
    `seconds`; returns its id."""
    envs = {REF: Native(EnvSpec("native"))}
    for name in comparisons:
        env = Injected(name, COMPARISONS[name])
        envs[env.label] = env
    study = Study(name="precision" + ("-duet" if duet else ""),
                  environments=[EnvironmentEntry(str(e.spec)) for e in envs.values()],
                  benchmarks=[BenchmarkCase(b) for b in benches], trials=10_000, seed=seed,
                  quick=True, baseline=REF, duet=duet, min_section_s=min_section)
    cases = {}
    for case in study.benchmarks:
        bench = benchmarks.get(case.name)
        cases[case.label] = (bench, bench.params(case.params, quick=True))
    prepared = Prepared(study, envs, cases, REF)
    runner = Runner(store, console=Console(file=io.StringIO()), show_progress=False)
    with alarm(seconds):
        outcome = runner.start(prepared)
    return outcome.run_id


@dataclass
class Rows:
    """(comparison, metric) -> ({block: env value}, {block: reference value}, hib)."""
    rows: dict = field(default_factory=dict)
    disturbed: int = 0
    trials: int = 0


def read_rows(store: Store, run_id: str) -> Rows:
    """The run's complete pairs per (comparison, metric), disturbed trials left out."""
    out = Rows()
    skip = set()
    for t in store.trials(run_id):
        out.trials += 1
        if (t.get("detail") or {}).get("disturbed"):
            skip.add((t["environment"], t["benchmark"], t["trial"]))
    out.disturbed = len(skip)
    values: dict = {}
    hib = {}
    for s in store.samples(run_id):
        if (s["environment"], s["benchmark"], s["trial"]) in skip:
            continue
        metric = f"{s['benchmark']}.{s['metric']}"
        values.setdefault((s["environment"], metric), {})[s["trial"]] = s["value"]
        hib[metric] = bool(s["higher_is_better"])
    for (env, metric), mine in values.items():
        if env == REF or (REF, metric) not in values:
            continue
        out.rows[(env.split("/")[-1], metric)] = (mine, values[(REF, metric)], hib[metric])
    return out


# -- analysing: independent stretches ---------------------------------------------------------
@dataclass
class Tally:
    runs: int = 0
    hits: int = 0          # A/A: significant either way; slowdowns: significant and slower
    blocks: int = 0

    def add(self, hit: bool, blocks: int) -> None:
        self.runs += 1
        self.hits += bool(hit)
        self.blocks += blocks

    def text(self) -> str:
        return f"{self.hits}/{self.runs}" if self.runs else "-"


def slower(log_ratio: float, hib: bool) -> bool:
    """Is a mean log ratio (env / reference) on the slow side of the metric?"""
    return log_ratio < 0 if hib else log_ratio > 0


def fixed_runs(env: dict, ref: dict, hib: bool, aa: bool, alpha: float,
               n: int = FIXED) -> tuple[Tally, Tally]:
    """Unpaired and paired decisions on consecutive disjoint n-block stretches."""
    common = sorted(set(env) & set(ref))
    unpaired, pair = Tally(), Tally()
    for k in range(len(common) // n):
        blocks = common[k * n:(k + 1) * n]
        e, r = {b: env[b] for b in blocks}, {b: ref[b] for b in blocks}
        u = decision.decide_unpaired(list(e.values()), list(r.values()), hib, alpha=alpha,
                                     seed=k)
        p = decision.decide_paired(e, r, hib, alpha=alpha, seed=k)
        for tally, d in ((unpaired, u), (pair, p)):
            sig = d.p_value is not None and d.p_value < alpha
            hit = sig if aa else sig and slower(log(d.estimate), hib)
            tally.add(hit, n)
    return unpaired, pair


def adaptive_runs(env: dict, ref: dict, hib: bool, aa: bool, alpha: float,
                  within: int) -> Tally:
    """The runner's stopping rule from the start of each stretch; a stretch the data end
    before it stops is left out."""
    d = paired.log_ratios(env, ref).d
    tally = Tally()
    start, low = 0, sequential.DEFAULT_MIN_BLOCKS
    while start + low <= len(d):
        part = d[start:start + within]
        seq = sequential.sequences(part, alpha)
        stop = sequential.stop_codes(seq, 10.0)[low - 1:] != 0
        if stop.any():
            n = int(stop.argmax()) + low
        elif len(part) == within:
            n = within
        else:
            break
        p = float(sequential.anytime_p(part[:n], alpha)[-1])
        sig = p < alpha
        tally.add(sig if aa else sig and slower(float(part[:n].mean()), hib), n)
        start += n
    return tally


def noise(env: dict, ref: dict) -> tuple[float, float, int]:
    """(CV of a member, correlation of the pair's logs, blocks) of an A/A row."""
    common = sorted(set(env) & set(ref))
    le = np.log([env[b] for b in common])
    lr = np.log([ref[b] for b in common])
    sigma = sqrt((np.var(le, ddof=1) + np.var(lr, ddof=1)) / 2)
    rho = float(np.corrcoef(le, lr)[0, 1]) if len(common) > 2 else 0.0
    return sqrt(exp(sigma ** 2) - 1), max(0.0, rho), len(common)


def simulated(cv: float, rho: float, alpha: float, within: int, runs: int = 4000,
              seed: int = 0) -> dict[str, float]:
    """The methods' rates in runs simulated with this noise (significance as measured)."""
    model = NoiseModel(cv=cv, rho=rho)
    out = {}
    for i, (name, f) in enumerate(COMPARISONS.items()):
        e, r, _ = draw(model, runs, max(within, FIXED), 1 + f, seed + i)
        d = np.log(e) - np.log(r)
        fixed = d[:, :FIXED]
        p = paired.sign_flip_p(fixed, seed)
        slow = fixed.mean(axis=1) > 0
        out[f"{name} paired 12"] = float(np.mean((p < alpha) & (slow | (not f))))
        part = d[:, :within]
        a = simulate.adaptive(part, alpha)
        at = a.stopped_at - 1
        p_at = sequential.anytime_p(part, alpha)[np.arange(runs), at]
        mean_at = (np.cumsum(part, axis=1) / np.arange(1, within + 1))[np.arange(runs), at]
        out[f"{name} adaptive"] = float(np.mean((p_at < alpha) & ((mean_at > 0) | (not f))))
        out[f"{name} adaptive blocks"] = float(a.stopped_at.mean())
    return out


# -- the report -------------------------------------------------------------------------------
def analyse(seq: Rows, duet: dict[str, Rows], alpha: float, within: int):
    metrics = sorted({m for _, m in seq.rows} | {m for r in duet.values() for _, m in r.rows})
    table: dict[tuple[str, str, str], Tally] = {}
    for metric in metrics:
        for name in COMPARISONS:
            aa = not COMPARISONS[name]
            if (name, metric) in seq.rows:
                env, ref, hib = seq.rows[(name, metric)]
                table[(metric, "unpaired 12", name)], table[(metric, "paired 12", name)] = \
                    fixed_runs(env, ref, hib, aa, alpha)
                table[(metric, "adaptive", name)] = adaptive_runs(env, ref, hib, aa, alpha, within)
            rows = duet.get(name)
            if rows is not None and (name, metric) in rows.rows:
                env, ref, hib = rows.rows[(name, metric)]
                table[(metric, "duet 12", name)] = fixed_runs(env, ref, hib, aa, alpha)[1]
                table[(metric, "duet adaptive", name)] = adaptive_runs(env, ref, hib, aa,
                                                                       alpha, within)
    return metrics, table


def report(seq: Rows, duet: dict[str, Rows], alpha: float, within: int,
           sim_runs: int) -> list[str]:
    metrics, table = analyse(seq, duet, alpha, within)
    lines = ["| metric | method | CV % | rho | A/A false alarms | 5 % detected | "
             "10 % detected | blocks per run |", "|---|---|---|---|---|---|---|---|"]
    totals: dict[tuple[str, str], Tally] = {}
    for metric in metrics:
        for method in METHODS:
            src = duet.get("twin") if method.startswith("duet") else seq
            cells = [table.get((metric, method, name), Tally()) for name in COMPARISONS]
            if not any(c.runs for c in cells):
                continue
            cv = rho = float("nan")
            if src is not None and ("twin", metric) in src.rows:
                cv, rho, _ = noise(*src.rows[("twin", metric)][:2])
            spent = [c.blocks / c.runs for c in cells if c.runs]
            lines.append(f"| {metric} | {method} | {cv * 100:.1f} | {rho:.2f} | "
                         + " | ".join(c.text() for c in cells)
                         + f" | {np.mean(spent):.1f} |")
            for name, c in zip(COMPARISONS, cells):
                t = totals.setdefault((method, name), Tally())
                t.runs, t.hits, t.blocks = t.runs + c.runs, t.hits + c.hits, t.blocks + c.blocks
    lines += ["", "| all metrics | A/A false alarms | 5 % detected | 10 % detected | "
              "blocks per run |", "|---|---|---|---|---|"]
    for method in METHODS:
        cells = [totals.get((method, name), Tally()) for name in COMPARISONS]
        if any(c.runs for c in cells):
            spent = sum(c.blocks for c in cells) / max(1, sum(c.runs for c in cells))
            lines.append(f"| {method} | " + " | ".join(
                f"{c.text()} ({c.hits / c.runs:.0%})" if c.runs else "-" for c in cells)
                + f" | {spent:.1f} |")
    lines += ["", f"Simulated with this host's noise ({sim_runs} runs each, normal tails, "
              f"adaptive at most {within} blocks):", "",
              "| metric | blocks from | CV % | rho | A/A paired 12 | A/A adaptive | "
              "5 % paired 12 | 5 % adaptive | 10 % paired 12 | 10 % adaptive | "
              "adaptive blocks (A/A, 5 %) |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for metric in metrics:
        for label, src in (("sequential", seq), ("duet", duet.get("twin"))):
            if src is None or ("twin", metric) not in src.rows:
                continue
            cv, rho, n = noise(*src.rows[("twin", metric)][:2])
            if n < 6:
                continue
            s = simulated(cv, rho, alpha, within, sim_runs)
            lines.append(
                f"| {metric} | {label} ({n}) | {cv * 100:.1f} | {rho:.2f} | "
                f"{s['twin paired 12']:.3f} | {s['twin adaptive']:.3f} | "
                f"{s['slow5 paired 12']:.3f} | {s['slow5 adaptive']:.3f} | "
                f"{s['slow10 paired 12']:.3f} | {s['slow10 adaptive']:.3f} | "
                f"{s['twin adaptive blocks']:.1f}, {s['slow5 adaptive blocks']:.1f} |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget", default="50m", help="wall-clock time of all runs (default 50m)")
    ap.add_argument("--duet-share", type=float, default=0.45,
                    help="share of the budget for the three duet runs (default 0.45)")
    ap.add_argument("--bench", action="append", choices=("pi", "stream", "himeno"),
                    help="only this kernel (repeatable; default: all three)")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--within", type=int, default=30,
                    help="adaptive runs stop by this many blocks (default 30)")
    ap.add_argument("--min-section", type=float, default=0.5,
                    help="the runs' minimum measured section in s (default 0.5)")
    ap.add_argument("--simulate", type=int, default=4000, help="simulated runs (default 4000)")
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--store", help="keep the runs in this store (default: a temporary one)")
    args = ap.parse_args(argv)
    budget = duration_s(args.budget, "--budget")
    benches = args.bench or ["pi", "stream", "himeno"]
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="vb-precision-") as tmp:
        store = Store(args.store or f"sqlite:///{tmp}/precision.db")
        seq_id = measure(store, list(COMPARISONS), benches, budget * (1 - args.duet_share),
                         False, args.seed, args.min_section)
        seq = read_rows(store, seq_id)
        duet = {}
        for i, name in enumerate(COMPARISONS):
            left = budget - (time.monotonic() - t0)
            run_id = measure(store, [name], benches, left / (len(COMPARISONS) - i), True,
                             args.seed + i + 1, args.min_section)
            duet[name] = read_rows(store, run_id)
    print(f"# bench/precision.py: {time.monotonic() - t0:.0f} s; sequential run: "
          f"{seq.trials} trials ({seq.disturbed} disturbed); duet runs: "
          + ", ".join(f"{n} {r.trials} ({r.disturbed} disturbed)" for n, r in duet.items())
          + f"; alpha {args.alpha:g}\n")
    print("\n".join(report(seq, duet, args.alpha, args.within, args.simulate)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
