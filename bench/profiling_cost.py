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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bench", default="pi,dd-write", help="comma-separated benchmarks")
    parser.add_argument("--spec", default="qemu:accel=tcg")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                        help="override a quick parameter of every benchmark that has it "
                             "(e.g. size_mb=128)")
    parser.add_argument("--no-settle", action="store_true",
                        help="do not settle the plugin before each profiled trial")
    args = parser.parse_args()
    names = [b for b in args.bench.split(",") if b]
    benches = []
    for n in names:
        bench = benchmarks.get(n)
        params = bench.params(quick=True)
        for item in args.param:
            key, _, value = item.partition("=")
            if key in params:
                old = params[key]
                params[key] = (value.lower() in ("1", "true", "yes", "on")
                               if isinstance(old, bool) else type(old)(value)
                               if old is not None else value)
        benches.append((bench, params))

    so = tcg.build_plugin()
    tcg.check_plugin(so)
    work = Path(tempfile.mkdtemp(prefix="vbexits-bench-"))
    plain, profiled = Qemu(EnvSpec.parse(args.spec)), Qemu(EnvSpec.parse(args.spec))
    profiled.extra_argv = tcg.plugin_argv(so, work / "ctl.sock")
    result: dict = {"spec": args.spec, "rounds": args.rounds, "quick": True,
                    "params": {b.name: p for b, p in benches}, "benchmarks": {}}
    try:
        for env in (plain, profiled):
            env.start()
        result["boot_s"] = {"plain": round(plain.boot_s, 2), "profiled": round(profiled.boot_s, 2)}
        result["label"] = plain.label
        control = tcg.PluginControl(work / "ctl.sock")

        t0 = time.monotonic()
        ks = profiled.exec(tcg.KALLSYMS_ARGV, timeout=120)
        read_s = time.monotonic() - t0
        t0 = time.monotonic()
        table = parse_kallsyms(ks.stdout)
        parse_s = time.monotonic() - t0

        walls = {n: {"plain": [], "profiled": []} for n in names}
        values = {n: {"plain": [], "profiled": []} for n in names}
        snap_s, settle_s, profile_s, events = [], [], [], {n: [] for n in names}
        for r in range(args.rounds):
            for bench, params in benches:
                for which, env in (("plain", plain), ("profiled", profiled)):
                    if which == "profiled":
                        t0 = time.monotonic()
                        if not args.no_settle:
                            control.settle()
                        settle_s.append(time.monotonic() - t0)
                        t0 = time.monotonic()
                        before = control.snapshot(work / "before")
                        snap_s.append(time.monotonic() - t0)
                    out = env.run_trial(bench, params)
                    if out.error:
                        print(f"{bench.name} on {which}: {out.error}", file=sys.stderr)
                        return 1
                    walls[bench.name][which].append(out.wall_s)
                    values[bench.name][which].append(out.values)
                    if which == "profiled":
                        after = control.snapshot(work / "after")
                        t0 = time.monotonic()
                        prof = tcg.to_profile(tcg.diff(before, after), table, out.wall_s)
                        profile_s.append(time.monotonic() - t0)
                        events[bench.name].append(sum(x.count for x in prof.by_reason))
                print(f"round {r + 1}/{args.rounds} {bench.name}: plain "
                      f"{walls[bench.name]['plain'][-1]:.2f} s, profiled "
                      f"{walls[bench.name]['profiled'][-1]:.2f} s", file=sys.stderr, flush=True)
        for n in names:
            p, q = statistics.median(walls[n]["plain"]), statistics.median(walls[n]["profiled"])
            result["benchmarks"][n] = {
                "wall_s": {k: [round(x, 3) for x in v] for k, v in walls[n].items()},
                "values": values[n],
                "median_wall_s": {"plain": round(p, 3), "profiled": round(q, 3)},
                "slowdown": round(q / p, 2),
                "metric_slowdown": metric_slowdown(benchmarks.get(n), values[n]),
                "within_target": q / p <= TARGET,
                "events_per_trial": events[n]}
        result["symbolise"] = {"kallsyms_bytes": len(ks.stdout), "text_symbols": len(table),
                               "read_kallsyms_s": round(read_s, 3),
                               "parse_kallsyms_s": round(parse_s, 3),
                               "to_profile_s_median": round(statistics.median(profile_s), 4)}
        result["snapshot_s_median"] = round(statistics.median(snap_s), 4)
        result["settle_s_median"] = round(statistics.median(settle_s), 4)
        result["settle"] = not args.no_settle
        result["plugin_stats"] = tcg.parse_stats((work / "after").read_text())
        result["target_slowdown"] = TARGET
    finally:
        for env in (plain, profiled):
            env.stop()
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
