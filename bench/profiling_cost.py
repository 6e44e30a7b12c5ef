#!/usr/bin/env python3
"""Measure what TCG exit profiling costs: a profiled guest (vbexits plugin loaded) against an
unprofiled one, the same benchmarks interleaved over a few rounds, and how long reading
and symbolising the guest's /proc/kallsyms takes. Prints JSON.

    python3 bench/profiling_cost.py [--rounds 3] [--bench pi,dd-write] [--spec qemu:accel=tcg]

Both guests are up at once and run the trials in turn (plain, profiled, plain, ...), so
load from elsewhere on the host falls on both. Target: slowdown <= 3x under TCG.
"""
import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from virtbench.measure import benchmarks  # noqa: E402
from virtbench.measure.environments.base import EnvSpec  # noqa: E402
from virtbench.measure.environments.qemu import Qemu  # noqa: E402
from virtbench.machinery.exits import tcg  # noqa: E402
from virtbench.machinery.exits.symbols import parse_kallsyms  # noqa: E402

TARGET = 3.0


def metric_slowdown(bench, values: dict) -> dict:
    """Per metric, how many times worse the profiled guest's median is (>1: slower). For a
    fixed-duration benchmark (tcp) this, not the wall time, is the cost."""
    out = {}
    for m in bench.metrics:
        plain = [v[m.name] for v in values["plain"] if m.name in v]
        prof = [v[m.name] for v in values["profiled"] if m.name in v]
        if plain and prof and statistics.median(plain) and statistics.median(prof):
            a, b = statistics.median(plain), statistics.median(prof)
            out[m.name] = round(a / b if m.higher_is_better else b / a, 2)
    return out


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bench", default="pi,dd-write", help="comma-separated benchmarks")
    parser.add_argument("--spec", default="qemu:accel=tcg")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                        help="override a quick parameter of every benchmark that has it "
                             "(e.g. size_mb=128)")
    parser.add_argument("--no-settle", action="store_true",
                        help="do not settle the plugin before each profiled trial")
    return parser.parse_args()


def benches_with(names: list[str], overrides: list[str]) -> list[tuple]:
    """(benchmark, its quick parameters with each NAME=VALUE it has applied), per name."""
    benches = []
    for n in names:
        bench = benchmarks.get(n)
        params = bench.params(quick=True)
        for item in overrides:
            key, _, value = item.partition("=")
            if key in params:
                old = params[key]
                params[key] = (value.lower() in ("1", "true", "yes", "on")
                               if isinstance(old, bool) else type(old)(value)
                               if old is not None else value)
        benches.append((bench, params))
    return benches


class Rounds:
    """The trials of both guests, and what profiling each profiled one cost."""

    def __init__(self, names: list[str], control, work: Path, table, settle: bool):
        self.control, self.work, self.table, self.settle = control, work, table, settle
        self.walls = {n: {"plain": [], "profiled": []} for n in names}
        self.values = {n: {"plain": [], "profiled": []} for n in names}
        self.events: dict[str, list] = {n: [] for n in names}
        self.snap_s: list[float] = []
        self.settle_s: list[float] = []
        self.profile_s: list[float] = []

    def trial(self, which: str, env, bench, params) -> str | None:
        """One trial on `env` (the profiled one between two snapshots of the plugin's
        counts); its error, or None."""
        if which == "profiled":
            t0 = time.monotonic()
            if self.settle:
                self.control.settle()
            self.settle_s.append(time.monotonic() - t0)
            t0 = time.monotonic()
            before = self.control.snapshot(self.work / "before")
            self.snap_s.append(time.monotonic() - t0)
        out = env.run_trial(bench, params)
        if out.error:
            return out.error
        self.walls[bench.name][which].append(out.wall_s)
        self.values[bench.name][which].append(out.values)
        if which == "profiled":
            after = self.control.snapshot(self.work / "after")
            t0 = time.monotonic()
            prof = tcg.to_profile(tcg.diff(before, after), self.table, out.wall_s)
            self.profile_s.append(time.monotonic() - t0)
            self.events[bench.name].append(sum(x.count for x in prof.by_reason))
        return None

    def benchmark(self, name: str) -> dict:
        walls = self.walls[name]
        p, q = statistics.median(walls["plain"]), statistics.median(walls["profiled"])
        return {"wall_s": {k: [round(x, 3) for x in v] for k, v in walls.items()},
                "values": self.values[name],
                "median_wall_s": {"plain": round(p, 3), "profiled": round(q, 3)},
                "slowdown": round(q / p, 2),
                "metric_slowdown": metric_slowdown(benchmarks.get(name), self.values[name]),
                "within_target": q / p <= TARGET,
                "events_per_trial": self.events[name]}


def read_symbols(profiled) -> tuple:
    """The profiled guest's kallsyms read and parsed: (its text, the table, read s, parse s)."""
    t0 = time.monotonic()
    ks = profiled.exec(tcg.KALLSYMS_ARGV, timeout=120)
    read_s = time.monotonic() - t0
    t0 = time.monotonic()
    table = parse_kallsyms(ks.stdout)
    return ks.stdout, table, read_s, time.monotonic() - t0


def measure(args, benches, plain, profiled, work: Path, result: dict) -> int:
    """Both guests started, the rounds run, `result` filled; 1 when a trial failed."""
    for env in (plain, profiled):
        env.start()
    result["boot_s"] = {"plain": round(plain.boot_s, 2), "profiled": round(profiled.boot_s, 2)}
    result["label"] = plain.label
    control = tcg.PluginControl(work / "ctl.sock")
    text, table, read_s, parse_s = read_symbols(profiled)
    names = [b.name for b, _ in benches]
    rounds = Rounds(names, control, work, table, settle=not args.no_settle)
    for r in range(args.rounds):
        for bench, params in benches:
            for which, env in (("plain", plain), ("profiled", profiled)):
                error = rounds.trial(which, env, bench, params)
                if error:
                    print(f"{bench.name} on {which}: {error}", file=sys.stderr)
                    return 1
            print(f"round {r + 1}/{args.rounds} {bench.name}: plain "
                  f"{rounds.walls[bench.name]['plain'][-1]:.2f} s, profiled "
                  f"{rounds.walls[bench.name]['profiled'][-1]:.2f} s", file=sys.stderr,
                  flush=True)
    result["benchmarks"] = {n: rounds.benchmark(n) for n in names}
    result["symbolise"] = {"kallsyms_bytes": len(text), "text_symbols": len(table),
                           "read_kallsyms_s": round(read_s, 3),
                           "parse_kallsyms_s": round(parse_s, 3),
                           "to_profile_s_median": round(statistics.median(rounds.profile_s), 4)}
    result["snapshot_s_median"] = round(statistics.median(rounds.snap_s), 4)
    result["settle_s_median"] = round(statistics.median(rounds.settle_s), 4)
    result["settle"] = not args.no_settle
    result["plugin_stats"] = tcg.parse_stats((work / "after").read_text())
    result["target_slowdown"] = TARGET
    return 0


def main() -> int:
    args = parse_args()
    benches = benches_with([b for b in args.bench.split(",") if b], args.param)
    so = tcg.build_plugin()
    tcg.check_plugin(so)
    work = Path(tempfile.mkdtemp(prefix="vbexits-bench-"))
    plain, profiled = Qemu(EnvSpec.parse(args.spec)), Qemu(EnvSpec.parse(args.spec))
    profiled.extra_argv = tcg.plugin_argv(so, work / "ctl.sock")
    result: dict = {"spec": args.spec, "rounds": args.rounds, "quick": True,
                    "params": {b.name: p for b, p in benches}, "benchmarks": {}}
    try:
        if measure(args, benches, plain, profiled, work, result):
            return 1
    finally:
        for env in (plain, profiled):
            env.stop()
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
