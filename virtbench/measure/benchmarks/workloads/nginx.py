"""nginx: a static file over HTTP/1.1 keep-alive, served by nginx 1.22 and loaded by wrk 4.1.

Each trial is one command of the environment (workloads/served.py): a fresh work directory
under /var/tmp with virtbench's own nginx.conf (written by a setup step, nothing of the
system's /etc/nginx read), the file of `size` bytes (zeros; no compression is configured,
so its content does not matter), nginx in the foreground (`daemon off;`, a master and
`workers` worker processes, `auto` = the environment's CPUs) on 127.0.0.1 at a port of the
trial's, ready when a request for the file succeeds, a warm-up wrk run of `warmup` seconds
whose figures are discarded, then the measured wrk run. nginx's pid, error log and temp
directories are in the work directory, which is removed after the trial; the access log is
off (a line per request written to a file would measure the disk too, and grow by
megabytes a second).

wrk is a **closed loop** (each connection sends its next request when the last is
answered): `requests_per_s` is the rate the server sustains with `connections` requests
always outstanding. `p50_ms` and `p99_ms` are wrk's own percentiles, which wrk 4.1 corrects
for coordinated omission with the run's mean interval (wrk_output.py says how); they are not
latencies at a fixed offered rate (no open-loop generator is packaged for the environments:
docs/benchmarks.md says why). What wrk's correction added (`omitted`, an estimate of what
the closed loop did not send) is kept in the trial's detail.

Which percentiles a case keeps is decided from its parameters, never per trial: `min_requests`
is the fewest requests a trial must complete (a trial that completes fewer fails, one line),
and a percentile q is kept when it reaches 100/(1-q) (percentiles.py): the defaults ask for
10,000 and keep p50 and p99; `--quick` asks for 200, p50's need (a TCG guest completed 564
to 1,828 in its 4 s here) and keeps p50. A request slower than `timeout_s` (10 s: a TCG
guest's queue of 100 connections answered in 0.2-0.9 s here) fails the trial, since wrk
leaves it out of its latencies.
"""
from __future__ import annotations

import secrets
from typing import Any

from ....core.errors import VirtbenchError
from ..base import Benchmark, Metric
from .checks import in_ranges, one_of
from .percentiles import supported
from .served import Served
from .wrk_output import DONE_LUA, parse_wrk

SCRATCH = "/var/tmp"
QUANTILES = (0.5, 0.99)
PORTS = (20000, 60000)
RANGES = {"seconds": (1, 3600), "connections": (1, 1000), "threads": (1, 64),
          "workers": (0, 256), "size": (0, 64 * 2**20), "timeout_s": (1, 60),
          "warmup": (0, 600), "min_requests": (0, 10**9)}
CLOSED = ("closed loop: each of `connections` connections sends its next request when the "
          "last is answered")


class Nginx(Benchmark):
    name = "nginx"
    family = "workload"
    description = ("nginx 1.22 serving a static file of `size` bytes over HTTP/1.1 keep-alive "
                   "to wrk 4.1 in the environment (loopback): a fresh server per trial, a "
                   "warm-up run discarded, requests/s and wrk's p50/p99 (closed loop)")
    metrics = (
        Metric("requests_per_s", "req/s", True, "requests per second wrk 4.1 completed in "
               f"`seconds` ({CLOSED})"),
        Metric("p50_ms", "ms", False, f"wrk's median latency ({CLOSED}; wrk 4.1 corrects its "
               "histogram for coordinated omission with the mean interval: not a latency at a "
               "fixed offered rate)"),
        Metric("p99_ms", "ms", False, f"wrk's 99th-percentile latency ({CLOSED}; wrk 4.1 "
               "corrects its histogram for coordinated omission with the mean interval: not a "
               "latency at a fixed offered rate)"),
    )
    tools = ("nginx", "wrk", "python3", "truncate")
    packages = ("nginx-light", "wrk")
    defaults = {"seconds": 60, "connections": 200, "threads": 2, "workers": 0, "size": 4096,
                "timeout_s": 10, "warmup": 5, "min_requests": 10_000, "where": "loopback"}
    quick = {"seconds": 4, "connections": 100, "warmup": 1, "min_requests": 200}

    def check(self, params: dict[str, Any]) -> None:
        one_of("nginx", params, "where", ("loopback",), unbuilt=("host",))
        in_ranges("nginx", params, RANGES)
        if params["threads"] > params["connections"]:
            raise VirtbenchError(f"benchmark nginx: threads={params['threads']} is more than "
                                 f"connections={params['connections']} (wrk gives each "
                                 "thread a share of the connections); give threads <= "
                                 "connections")

    def timeout(self, params: dict[str, Any]) -> float:
        """The runs' own seconds, and generously for the server's start (slow guests)."""
        return 300.0 + 2.0 * (params["warmup"] + params["seconds"] + params["timeout_s"])

    def floor_requests(self, params: dict[str, Any]) -> int:
        """The fewest requests a successful trial holds: `min_requests` (the module says why)."""
        return params["min_requests"]

    def support(self, params: dict[str, Any]):
        """The percentiles a case keeps, from the requests its trials hold at least."""
        floor = self.floor_requests(params)
        return supported(QUANTILES, floor, f"nginx, at least {floor:,} requests "
                                           "(min_requests)")

    def served(self, params: dict[str, Any], port: int, token: str) -> Served:
        """The trial's setup, server, warm-up and client (pure); `token` names the file, so
        that no other server on the port can pass for this one."""
        url = f"http://127.0.0.1:{port}/{token}.bin"
        write = 'printf "%s" "$1" > "$2"'
        return Served(
            setup=[["mkdir", "-m", "0755", "{work}/www", "{work}/tmp"],
                   # nginx's workers run as nobody when it starts as root: they read www/
                   ["chmod", "0755", "{work}"],
                   ["truncate", "-s", str(params["size"]), f"{{work}}/www/{token}.bin"],
                   ["sh", "-c", write, "virtbench-nginx", nginx_conf(params, port),
                    "{work}/nginx.conf"],
                   ["sh", "-c", write, "virtbench-nginx", DONE_LUA, "{work}/done.lua"]],
            server=["nginx", "-p", "{work}/", "-c", "{work}/nginx.conf",
                    "-e", "{work}/error.log"],
            ready=["python3", "-c", READY, url],
            warmup=[wrk_argv(params, params["warmup"], url, None)] if params["warmup"] else [],
            client=wrk_argv(params, params["seconds"], url, "{work}/done.lua"),
            scratch=SCRATCH)

    def argv(self, params: dict[str, Any], env) -> list[str]:
        port = PORTS[0] + secrets.randbelow(PORTS[1] - PORTS[0])
        return self.served(params, port, secrets.token_hex(8)).argv()

    def run_trial(self, env, params: dict[str, Any], start_at=None, slot_s=None):
        """A trial, checked against its case (`judge`)."""
        outcome = super().run_trial(env, params)
        if outcome.error is None:
            self.judge(outcome, params)
        return outcome

    def judge(self, outcome, params: dict[str, Any]) -> None:
        """A parsed trial against its case: it fails when it holds fewer requests than the
        floor its kept percentiles were chosen by; it keeps those percentiles only, says the
        others once (a warning) and keeps wrk's omission estimate in its detail."""
        run = parse_wrk(outcome.stdout)       # parse() read it already: pure, it reads again
        floor = self.floor_requests(params)
        if run["requests"] < floor:
            outcome.error = (f"wrk completed {run['requests']:,.0f} requests, fewer than the "
                             f"{floor:,} the case's percentiles were chosen by")
            outcome.partial, outcome.values = dict(outcome.values), {}
            return
        support = self.support(params)
        outcome.values = {k: v for k, v in outcome.values.items()
                          if k == "requests_per_s" or k in support.kept}
        outcome.warnings += support.warnings()
        outcome.detail.update({
            "loop": "closed", "omitted_estimate": int(run["omitted"]),
            "requests": int(run["requests"]), "corrected": int(run["corrected"]),
            "omitted_share": round(run["omitted"] / run["corrected"], 6)})

    def parse(self, stdout: str) -> dict[str, float]:
        run = parse_wrk(stdout)
        return {k: run[k] for k in ("requests_per_s", "p50_ms", "p99_ms")}


# exits 0 only when the URL answers 2xx with the whole file
READY = ("import sys, urllib.request\n"
         "with urllib.request.urlopen(sys.argv[1], timeout=2) as r:\n"
         "    r.read()\n")


def wrk_argv(params: dict[str, Any], seconds: int, url: str, script: str | None) -> list[str]:
    """wrk with the case's threads, connections and timeout (pure)."""
    argv = ["wrk", "-t", str(params["threads"]), "-c", str(params["connections"]),
            "-d", f"{seconds}s", "--timeout", f"{params['timeout_s']}s", "--latency"]
    return argv + (["-s", script] if script else []) + [url]


def nginx_conf(params: dict[str, Any], port: int) -> str:
    """virtbench's nginx.conf (pure); paths are relative to the prefix (-p, the work
    directory). keepalive_requests is raised from nginx's 1000 so that a connection stays
    open for the whole run (keep-alive is what is measured, not reconnects)."""
    workers = params["workers"] or "auto"
    return "\n".join([
        "daemon off;", "master_process on;", f"worker_processes {workers};",
        "pid nginx.pid;", "error_log error.log warn;",
        f"events {{ worker_connections {max(1024, params['connections'] + 64)}; }}",
        "http {", "  access_log off;", "  sendfile on;", "  tcp_nopush on;",
        "  keepalive_requests 1000000;", "  keepalive_timeout 65s;",
        "  client_body_temp_path tmp/body;", "  proxy_temp_path tmp/proxy;",
        "  fastcgi_temp_path tmp/fastcgi;", "  uwsgi_temp_path tmp/uwsgi;",
        "  scgi_temp_path tmp/scgi;", "  default_type application/octet-stream;",
        f"  server {{ listen 127.0.0.1:{port}; root www; location / {{ }} }}", "}", ""])
