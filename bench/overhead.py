#!/usr/bin/env python3
"""Does virtbench's harness disturb what it measures?

Runs the `stream` kernel N times by hand (the binary straight from a shell) and N times
through `virtbench run --env native --bench stream --trials 1`, interleaved so drift lands
on both, and prints the ratio of the medians of Triad MB/s (1.00 = no effect) and the
wall time a trial costs by hand and through the harness.

    .venv/bin/python bench/overhead.py            # seed size: 10,000,000 elements, 20 passes
    .venv/bin/python bench/overhead.py --quick    # 2,000,000 elements, 5 passes

With --ssh, the same comparison through an `ssh` environment (a private sshd on 127.0.0.1
standing for a remote machine): the kernel started by hand over one multiplexed SSH connection
against the same kernel as a virtbench trial through the agent over that connection, plus
the fixed cost of one command through each (`true`, median).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from virtbench.machinery.kernels import build as kernels  # noqa: E402
from virtbench.measure.benchmarks.memory import Stream  # noqa: E402


def over_ssh(repeats: int, quick: bool) -> int:
    from virtbench.measure.environments import create
    from virtbench.machinery.host.net.sshd import Sshd
    bench = Stream()
    params = bench.params(quick=quick)
    server = Sshd("127.0.0.1", [])
    try:
        (server.dir / "kh").write_text(server.known_hosts_line())
        env = create(f"ssh:host=127.0.0.1,port={server.port},key={server.identity},"
                     f"known_hosts={server.dir / 'kh'},name=overhead")
        env.resolve()
        with env:
            session = env.session
            argv = [env.kernel_path("stream"), "-n", str(params["elements"]),
                    "-p", str(params["passes"])]
            hand, agent, hand_true, agent_true = [], [], [], []
            for i in range(repeats):
                hand.append(bench.parse(session.run(argv, timeout=600).stdout)["triad_mb_s"])
                outcome = bench.run_trial(env, params)
                agent.append(outcome.values["triad_mb_s"])
                t0 = time.monotonic()
                session.run(["true"], timeout=30)
                hand_true.append(time.monotonic() - t0)
                t0 = time.monotonic()
                env.exec(["true"], timeout=30)
                agent_true.append(time.monotonic() - t0)
                print(f"  {i + 1:2d}/{repeats}: by hand {hand[-1]:9.0f} MB/s, "
                      f"through virtbench {agent[-1]:9.0f} MB/s", flush=True)
    finally:
        server.stop()
    med_hand, med_vb = statistics.median(hand), statistics.median(agent)
    print(json.dumps({
        "elements": params["elements"], "passes": params["passes"], "repeats": repeats,
        "triad_mb_s_median_by_hand_over_ssh": round(med_hand),
        "triad_mb_s_median_virtbench_ssh": round(med_vb),
        "ratio_of_medians": round(med_vb / med_hand, 3),
        "command_s_median_by_hand_over_ssh": round(statistics.median(hand_true), 4),
        "command_s_median_through_agent": round(statistics.median(agent_true), 4),
    }, indent=1))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", "--repeats", type=int, default=12)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--ssh", action="store_true", help="through an ssh environment (loopback)")
    args = ap.parse_args()
    if args.ssh:
        return over_ssh(args.repeats, args.quick)

    bench = Stream()
    params = bench.params(quick=args.quick)
    binary = kernels.build() / "stream"
    hand_argv = [str(binary), "-n", str(params["elements"]), "-p", str(params["passes"])]
    store = Path(tempfile.mkdtemp(prefix="vb-overhead-")) / "store.db"
    env = dict(os.environ, VIRTBENCH_STORE=f"sqlite:///{store}")
    vb_argv = [sys.executable, "-m", "virtbench.interface.cli.commands", "run", "--env", "native", "--bench", "stream",
               "--trials", "1", "--no-progress"] + (["--quick"] if args.quick else [])

    hand, harness, hand_wall, harness_wall = [], [], [], []
    for i in range(args.repeats):
        t0 = time.monotonic()
        out = subprocess.run(hand_argv, capture_output=True, text=True, check=True).stdout
        hand_wall.append(time.monotonic() - t0)
        hand.append(bench.parse(out)["triad_mb_s"])
        t0 = time.monotonic()
        subprocess.run(vb_argv, capture_output=True, text=True, check=True, env=env)
        harness_wall.append(time.monotonic() - t0)
        print(f"  {i + 1:2d}/{args.repeats}: by hand {hand[-1]:9.0f} MB/s", end="", flush=True)
        print("  (through virtbench: stored)")

    from virtbench.foundations.store import Store
    s = Store(f"sqlite:///{store}")
    harness = [x["value"] for run in s.list_runs(limit=args.repeats)
               for x in s.samples(run["id"]) if x["metric"] == "triad_mb_s"]
    trial_wall = [t["wall_s"] for run in s.list_runs(limit=args.repeats) for t in s.trials(run["id"])]

    med_hand, med_vb = statistics.median(hand), statistics.median(harness)
    print(json.dumps({
        "elements": params["elements"], "passes": params["passes"], "repeats": args.repeats,
        "triad_mb_s_median_by_hand": round(med_hand), "triad_mb_s_median_virtbench": round(med_vb),
        "ratio_of_medians": round(med_vb / med_hand, 3),
        "kernel_wall_s_median_by_hand": round(statistics.median(hand_wall), 3),
        "kernel_wall_s_median_in_agent": round(statistics.median(trial_wall), 3),
        "virtbench_run_wall_s_median": round(statistics.median(harness_wall), 3),
    }, indent=1))
    print(f"ratio of medians (virtbench / by hand), Triad: {med_vb / med_hand:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
