#!/usr/bin/env python3
"""Measure what the fleet machinery costs, with a private redis-server and two local workers
(`virtbench worker --name a/b`) on one SQLite store. Prints JSON.

    python3 bench/fleet.py [--units 10] [--rounds 5] [--trials 20] [--k 18]

- latency: the time from enqueueing a unit (`fleet run`) to its worker starting it, over
  `--units` fleet runs of a one-trial study on both hosts (median; target <= 1 s);
- wall: `virtbench fleet run --host a --wait` against `virtbench run` of the same study on
  this host (pi at 2^k digits, `--trials` trials), interleaved over `--rounds` rounds, medians
  (target <= 5 % more). Both are the command as a user times it, start-up included. One host
  only: two local workers share this machine's CPUs, so two hosts here would measure
  contention, not the fleet; their wall time is printed too, for what it is. The runs' own
  durations in the store (start to end of the study) are printed beside, for both.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))

import redis  # noqa: E402

from redisserver import RedisServer  # noqa: E402
from virtbench.execution.fleet import state  # noqa: E402
from virtbench.foundations.store import Store  # noqa: E402

LATENCY_TARGET_S, WALL_TARGET_PCT = 1.0, 5.0


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "virtbench.interface.cli.commands", *args]


def timed(argv: list[str], env: dict) -> float:
    t0 = time.monotonic()
    out = subprocess.run(argv, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {out.returncode}: {out.stderr.strip()}")
    return time.monotonic() - t0


def last_run_s(store: Store) -> float:
    """The latest run's own duration in the store (its start to its end): the study alone,
    without the command's start-up and the fleet's hand-offs."""
    run = store.list_runs(limit=1)[0]
    return (run["finished"] - run["started"]).total_seconds()


def start_worker(name: str, env: dict, logdir: Path, client) -> subprocess.Popen:
    log = (logdir / f"worker-{name}.log").open("w")
    proc = subprocess.Popen(cli("worker", "--name", name), stdout=log, stderr=subprocess.STDOUT,
                            env=env, start_new_session=True)
    while not client.exists(f"virtbench:worker:{name}"):
        if proc.poll() is not None:
            raise SystemExit(f"worker {name} died: {(logdir / f'worker-{name}.log').read_text()}")
        time.sleep(0.1)
    return proc


def latencies(units: int, env: dict, client) -> list[float]:
    """Enqueue to the worker having the unit in hand, for each unit of `units` fleet runs of
    a one-trial study on both hosts."""
    out = []
    tiny = ("--env", "native", "--bench", "pi:k=10", "--trials", "1")
    for _ in range(units):
        done = subprocess.run(cli("fleet", "run", *tiny, "--host", "a", "--host", "b", "--wait"),
                              capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise SystemExit(f"fleet run: {done.stderr.strip()}")
        fleet_id = done.stdout.strip()
        for h in ("a", "b"):
            st = state.get_state(client, fleet_id, h)
            # the unit's hash keeps each field it was given: enqueued, then received
            if "received" in st and "enqueued" in st:
                out.append(st["received"] - st["enqueued"])
    return out


def walls(args, env: dict, store: Store) -> dict[str, list[float]]:
    """The same study by `virtbench run`, by `fleet run` on one host and on both, interleaved
    over the rounds; beside the first two, their runs' own durations in the store."""
    study = ("--env", "native", "--bench", f"pi:k={args.k}", "--trials", str(args.trials),
             "--seed", "1")
    got: dict[str, list[float]] = {k: [] for k in ("direct", "fleet1", "fleet2", "direct_run",
                                                   "fleet_run")}
    for _ in range(args.rounds):
        got["direct"].append(timed(cli("run", *study, "--no-progress"), env))
        got["direct_run"].append(last_run_s(store))
        got["fleet1"].append(timed(cli("fleet", "run", *study, "--host", "a", "--wait"), env))
        got["fleet_run"].append(last_run_s(store))
        got["fleet2"].append(timed(cli("fleet", "run", *study, "--host", "a", "--host", "b",
                                       "--wait"), env))
    return got


def summary(args, lat: list[float], w: dict[str, list[float]]) -> dict:
    med = statistics.median
    extra_pct = 100 * (med(w["fleet1"]) / med(w["direct"]) - 1)
    return {
        "latency_s": {"median": round(med(lat), 3), "max": round(max(lat), 3),
                      "n": len(lat), "target": LATENCY_TARGET_S,
                      "ok": med(lat) <= LATENCY_TARGET_S},
        "wall_s": {"direct": [round(x, 2) for x in w["direct"]],
                   "fleet_one_host": [round(x, 2) for x in w["fleet1"]],
                   "fleet_two_local_hosts": [round(x, 2) for x in w["fleet2"]],
                   "extra_pct": round(extra_pct, 1),
                   "run_in_store_direct": [round(x, 2) for x in w["direct_run"]],
                   "run_in_store_fleet": [round(x, 2) for x in w["fleet_run"]],
                   # what each costs beyond its study, per round: start-up, report /
                   # enqueue, hand-off, the end seen; then fleet minus direct
                   "fixed_cost_s": {
                       "direct": round(med([a - b for a, b in zip(w["direct"],
                                                                  w["direct_run"])]), 2),
                       "fleet": round(med([a - b for a, b in zip(w["fleet1"],
                                                                 w["fleet_run"])]), 2)},
                   "target_pct": WALL_TARGET_PCT,
                   "ok": extra_pct <= WALL_TARGET_PCT},
        "study": f"native, pi:k={args.k}, {args.trials} trials + 1 warm-up",
        "load_avg": os.getloadavg(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--k", type=int, default=18)
    args = parser.parse_args()

    server = RedisServer()
    tmp = Path(tempfile.mkdtemp(prefix="vb-fleet-bench-"))
    store_url = f"sqlite:///{tmp / 'store.db'}"
    Store(store_url)
    env = {**os.environ, "VIRTBENCH_BROKER": server.url, "VIRTBENCH_STORE": store_url}
    client = redis.Redis.from_url(server.url)
    workers = []
    try:
        workers = [start_worker(n, env, tmp, client) for n in ("a", "b")]
        time.sleep(0.5)
        lat = latencies(args.units, env, client)
        print(json.dumps(summary(args, lat, walls(args, env, Store(store_url))), indent=2))
        return 0
    finally:
        for w in workers:
            if w.poll() is None:
                w.terminate()
                try:
                    w.wait(20)
                except subprocess.TimeoutExpired:
                    w.kill()
        server.stop()
        subprocess.run(["rm", "-rf", str(tmp)])


if __name__ == "__main__":
    sys.exit(main())
