#!/usr/bin/env python3
"""Does virtbench's harness change nginx's requests/s? (issue 39: within 3 %)

Natively, in interleaved pairs: wrk run directly (by hand: nginx started from this script
with virtbench's nginx.conf, the same file, the same warm-up, then wrk with the same
arguments, virtbench's done() script included) and the same case as a virtbench trial
(`Nginx.run_trial` in a `native` environment: the Served script through the environment's
exec()). The pair's order alternates (by hand first in odd pairs) so that drift lands on
both. Prints each pair, the median of the pairs' ratios (virtbench / by hand) and the ratio
of the medians, then one JSON object.

    .venv/bin/python bench/workload_harness_nginx.py                 # 5 pairs of 10 s runs
    .venv/bin/python bench/workload_harness_nginx.py --pairs 3 --seconds 5

Only 127.0.0.1 is used; every run is bounded by its seconds, and nginx is stopped by PID.
"""
from __future__ import annotations

import argparse
import json
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness_pairs import summarize  # noqa: E402
from virtbench.measure import environments  # noqa: E402
from virtbench.measure.benchmarks.workloads.nginx import Nginx, nginx_conf, wrk_argv  # noqa: E402
from virtbench.measure.benchmarks.workloads.wrk_output import DONE_LUA, parse_wrk  # noqa: E402


def by_hand(params: dict, port: int) -> float:
    """nginx and wrk run directly, as virtbench's trial runs them; requests/s."""
    work = Path(tempfile.mkdtemp(prefix="vb-nginx-hand.", dir="/var/tmp"))
    work.chmod(0o755)
    server = None
    try:
        token = secrets.token_hex(8)
        for sub in ("www", "tmp"):
            (work / sub).mkdir(mode=0o755)
        with open(work / "www" / f"{token}.bin", "wb") as f:
            f.truncate(params["size"])
        (work / "nginx.conf").write_text(nginx_conf(params, port))
        (work / "done.lua").write_text(DONE_LUA)
        url = f"http://127.0.0.1:{port}/{token}.bin"
        server = subprocess.Popen(["nginx", "-p", f"{work}/", "-c", str(work / "nginx.conf"),
                                   "-e", str(work / "error.log")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_ready(url, server)
        if params["warmup"]:
            subprocess.run(wrk_argv(params, params["warmup"], url, None), check=True,
                           capture_output=True, timeout=params["warmup"] + 60)
        out = subprocess.run(wrk_argv(params, params["seconds"], url, str(work / "done.lua")),
                             check=True, capture_output=True, text=True,
                             timeout=params["seconds"] + 60).stdout
        return parse_wrk(out)["requests_per_s"]
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        shutil.rmtree(work, ignore_errors=True)


def wait_ready(url: str, server: subprocess.Popen, limit_s: float = 30.0) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"nginx exited ({server.returncode}) before it answered")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                r.read()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nginx did not answer within {limit_s:g} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--connections", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=2)
    args = ap.parse_args()
    bench = Nginx()
    params = bench.params({"seconds": args.seconds, "connections": args.connections,
                           "warmup": args.warmup})
    pairs = []
    with environments.create("native") as env:
        for i in range(args.pairs):
            port = 20000 + secrets.randbelow(40000)
            order = ("hand", "virtbench") if i % 2 == 0 else ("virtbench", "hand")
            got = {}
            for who in order:
                if who == "hand":
                    got[who] = by_hand(params, port)
                else:
                    outcome = bench.run_trial(env, params)
                    if not outcome.ok:
                        raise SystemExit(f"virtbench's trial failed: {outcome.error}")
                    got[who] = outcome.values["requests_per_s"]
            pairs.append((got["hand"], got["virtbench"]))
            print(f"  {i + 1}/{args.pairs} ({order[0]} first): by hand {got['hand']:10.1f} "
                  f"req/s, virtbench {got['virtbench']:10.1f} req/s, ratio "
                  f"{got['virtbench'] / got['hand']:.4f}", flush=True)
    print(json.dumps({"params": params, **summarize(pairs)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
