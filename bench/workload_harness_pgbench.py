#!/usr/bin/env python3
"""Does virtbench's harness change pgbench's throughput? (issue 39: within 3 %)

Natively, in interleaved pairs (the order alternates, so drift lands on both sides):

- **through virtbench**: `virtbench run --env native --bench pgbench:... --trials 1`, its tps
  read from the store (rate=1, so that no latency run follows: 1 x seconds transactions
  support no percentile);
- **by hand**: the same steps from this script with no virtbench code in the path: initdb and
  postgres as the postgres user in a new directory under /var/tmp, pg_isready, `pgbench -i`,
  the same warm-up, then `pgbench -b MODE -c C -j min(C, CPUs) -T S` with the same arguments,
  its `tps = ` line read with a regular expression.

Prints each pair, the ratio of medians and the geometric mean of the pairs' ratios
(virtbench / by hand; 1.00 = no effect).

    .venv/bin/python bench/workload_harness_pgbench.py [-n 5] [--mode tpcb|select-only]
        [--seconds 10] [--clients 4] [--scale 1] [--warmup 2]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness_pairs import summarize  # noqa: E402
from virtbench.measure.benchmarks.workloads.pgbench import BIN, MODES, USER  # noqa: E402

PORT = "5432"


def by_hand(args) -> float:
    """One trial with no virtbench code in the path; its tps."""
    work = tempfile.mkdtemp(prefix="vb-harness-pg-", dir="/var/tmp")
    shutil.chown(work, USER)
    data, conn = f"{work}/data", ["-h", work, "-p", PORT, "-U", USER]
    as_pg = ["runuser", "-u", USER, "--"]
    server = None
    try:
        subprocess.run(as_pg + [f"{BIN}/initdb", "-D", data, "-A", "trust", "-U", USER, "-E",
                                "UTF8", "--locale=C", "--no-sync"], check=True,
                       capture_output=True)
        server = subprocess.Popen(as_pg + [f"{BIN}/postgres", "-D", data, "-k", work, "-c",
                                           "listen_addresses=", "-p", PORT],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(600):
            if subprocess.run([f"{BIN}/pg_isready", "-q", *conn[:4]]).returncode == 0:
                break
            time.sleep(0.1)
        pgbench = [f"{BIN}/pgbench", *conn]
        subprocess.run(pgbench + ["-i", "-q", "-s", str(args.scale), USER], check=True,
                       capture_output=True)
        run = ["-b", MODES[args.mode], "-c", str(args.clients)]
        if args.warmup:
            subprocess.run(pgbench + run + ["-j", str(args.clients), "-T", str(args.warmup),
                                            USER], check=True, capture_output=True)
        jobs = min(args.clients, len(os.sched_getaffinity(0)))
        out = subprocess.run(pgbench + run + ["-j", str(jobs), "-T", str(args.seconds), USER],
                             check=True, capture_output=True, text=True).stdout
        return float(re.search(r"^tps = ([0-9.]+) \(without", out, re.M).group(1))
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


def through_virtbench(args, store: Path) -> float:
    """One `virtbench run` trial; its tps from the store."""
    spec = (f"pgbench:mode={args.mode},clients={args.clients},seconds={args.seconds},"
            f"scale={args.scale},warmup={args.warmup},rate=1")
    url = f"sqlite:///{store}"
    subprocess.run([sys.executable, "-m", "virtbench", "run", "--env", "native", "--bench", spec,
                    "--trials", "1", "--store", url, "--no-progress"], check=True,
                   capture_output=True, cwd=Path(__file__).resolve().parents[1])
    from virtbench.foundations.store import Store
    s = Store(url)
    run = s.list_runs(limit=1)[0]
    return next(x["value"] for x in s.samples(run["id"]) if x["metric"] == "tps")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", "--pairs", type=int, default=5)
    ap.add_argument("--mode", default="tpcb", choices=sorted(MODES))
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=2)
    args = ap.parse_args()
    private = Path(tempfile.mkdtemp(prefix="vb-harness-"))
    hand, harness = [], []
    try:
        for i in range(args.pairs):
            first_hand = i % 2 == 0
            for side in ("hand", "vb") if first_hand else ("vb", "hand"):
                if side == "hand":
                    hand.append(by_hand(args))
                else:
                    harness.append(through_virtbench(args, private / "store.db"))
            print(f"  {i + 1}/{args.pairs} ({'hand first' if first_hand else 'virtbench first'}): "
                  f"by hand {hand[-1]:9.1f} tps, through virtbench {harness[-1]:9.1f} tps, "
                  f"ratio {harness[-1] / hand[-1]:.3f}", flush=True)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    print(json.dumps({
        "mode": args.mode, "clients": args.clients, "seconds": args.seconds,
        "scale": args.scale, "warmup": args.warmup, "date": time.strftime("%Y-%m-%d"),
        **summarize(list(zip(hand, harness)))}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
