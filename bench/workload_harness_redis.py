#!/usr/bin/env python3
"""Does virtbench's harness change the redis figure it reports?

Natively, N interleaved pairs: redis-benchmark run directly (a fresh redis-server started
here with the same options, its key space filled, the same warm-up, then redis-benchmark with
the same arguments) and one trial of `virtbench run --env native --bench redis:... --trials
1`; the order within a pair alternates (ABBA), so drift lands on both. Prints each pair, the
ratio of the medians of ops/s (1.00 = no effect) and the geometric mean of the pairs' ratios.

    .venv/bin/python bench/workload_harness_redis.py                 # quick case, 5 pairs
    .venv/bin/python bench/workload_harness_redis.py -n 7 --test set --pipeline 16

The target (issue 39): virtbench within 3 % of the tool run directly.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness_pairs import summarize  # noqa: E402
from virtbench.foundations.store import Store  # noqa: E402
from virtbench.measure.benchmarks.workloads.redis import (FILL, Redis,  # noqa: E402
                                                          warmup_requests)
from virtbench.measure.benchmarks.workloads.redis_output import parse_redis_benchmark  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def direct(bench: Redis, params: dict) -> float:
    """One run by hand: the server, fill, warm-up and redis-benchmark as the trial runs them."""
    work = Path(tempfile.mkdtemp(prefix="vb-redis-direct-"))
    port, sock = free_port(), str(work / "redis.sock")
    server = subprocess.Popen(
        ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--unixsocket", sock,
         "--unixsocketperm", "700", "--save", "", "--appendonly", "no", "--daemonize", "no",
         "--dir", str(work)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            if subprocess.run(["redis-cli", "-s", sock, "ping"], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        subprocess.run(["redis-cli", "-s", sock, "eval", FILL, "0", str(params["keyspace"]),
                        str(params["data"])], capture_output=True, check=True, timeout=600)
        subprocess.run(bench.client(params, port, warmup_requests(params)), capture_output=True,
                       check=True, timeout=bench.timeout(params))
        out = subprocess.run(bench.client(params, port, params["requests"]), capture_output=True,
                             text=True, check=True, timeout=bench.timeout(params)).stdout
        return parse_redis_benchmark(out)["ops_per_s"]
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


def through_virtbench(spec: str, store_url: str) -> float:
    """One trial through the CLI; its ops_per_s from the store."""
    argv = [sys.executable, "-m", "virtbench", "run", "--env", "native", "--bench", spec,
            "--trials", "1", "--no-progress", "--store", store_url]
    subprocess.run(argv, capture_output=True, text=True, check=True,
                   env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1])))
    store = Store(store_url)
    run = store.list_runs(limit=1)[0]
    return next(x["value"] for x in store.samples(run["id"]) if x["metric"] == "ops_per_s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", "--pairs", type=int, default=5)
    ap.add_argument("--test", default="get")
    ap.add_argument("--pipeline", type=int, default=1)
    ap.add_argument("--requests", type=int, default=None, help="default: the quick size")
    args = ap.parse_args()
    bench = Redis()
    given = {"test": args.test, "pipeline": args.pipeline}
    given["requests"] = args.requests or bench.quick["requests"]
    params = bench.params(given)
    spec = "redis:" + ",".join(f"{k}={v}" for k, v in given.items())
    store_url = f"sqlite:///{Path(tempfile.mkdtemp(prefix='vb-redis-harness-')) / 'store.db'}"
    hand, harness = [], []
    for i in range(args.pairs):
        order = (("direct", "virtbench") if i % 2 == 0 else ("virtbench", "direct"))
        for which in order:
            if which == "direct":
                hand.append(direct(bench, params))
            else:
                harness.append(through_virtbench(spec, store_url))
        print(f"  {i + 1}/{args.pairs} ({' then '.join(order)}): direct {hand[-1]:10.0f} ops/s, "
              f"virtbench {harness[-1]:10.0f} ops/s", flush=True)
    print(json.dumps({"case": spec, "date": time.strftime("%Y-%m-%d"),
                      "load_average": os.getloadavg()[0],
                      **summarize(list(zip(hand, harness)))}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
