"""redis: redis-server 7.0 driven by redis-benchmark, one test (GET or SET) per case.

`where=loopback` (the default): server and client in the environment, in one command
(served.py). Per trial a fresh redis-server (`--save '' --appendonly no
--daemonize no`, no persistence) listens on 127.0.0.1 at a port of the trial's own and on a
unix socket in the trial's work directory; the key space is filled (`keyspace` keys
`key:%012d`, redis-benchmark's `-r` names, each `data` bytes, by one Lua script), a warm-up
run of the same test is discarded, then redis-benchmark runs the case over TCP loopback.
`where=host`: the same server in the environment, redis-benchmark at the host side of the
environment's network path (redis_host.py).

The load is a closed loop: each of `clients` connections sends its next request (or
pipeline of `pipeline` requests) only when the last is answered, so while the server stalls
no request is sent, and its percentiles leave out the requests a stall would have delayed.
The trial's detail says so (`loop: closed`; its `load` key is the runner's record of the
host's load) and how many requests the loop held back (`omitted_estimate`, from
redis-benchmark's latency histogram).
"""
from __future__ import annotations

import random

from ..base import Benchmark, Metric
from .checks import in_ranges, one_of
from .percentiles import Supported, omitted_estimate, supported
from .redis_host import HELD, HOLD_S, READY, host_trial
from .redis_output import parse_redis_benchmark, read_redis_benchmark
from .served import Served

# Fills keys key:000000000000 .. key:(K-1) with D-byte values: redis-benchmark -r K's names
FILL = ("for i = 0, tonumber(ARGV[1]) - 1 do redis.call('SET', string.format('key:%012d', i), "
        "string.rep('x', tonumber(ARGV[2]))) end return redis.call('DBSIZE')")
PORTS = (20000, 32768)      # below Linux's ephemeral range (32768-60999)
SOCKET = "{work}/redis.sock"
LOOPBACK = "127.0.0.1"
TESTS = ("get", "set")
WHERE = ("loopback", "host")
RANGES = {"pipeline": (1, 1024), "clients": (1, 1000), "requests": (1000, 100_000_000),
          "data": (1, 65536), "keyspace": (1, 10_000_000)}
QUANTILES = (0.5, 0.99)
CLOSED = ("closed loop: each client sends its next request (or pipeline) when the last is "
          "answered")


def warmup_requests(params: dict) -> int:
    """The discarded warm-up run's requests: a tenth of the case's, at least 1,000."""
    return max(1000, params["requests"] // 10)


class Redis(Benchmark):
    name = "redis"
    family = "workload"
    description = ("redis-server 7.0 and redis-benchmark (GET or SET, a fixed key space and "
                   "value size), both in the environment over TCP loopback (where=host: the "
                   "client at the host side of its network path); a fresh server per "
                   "trial, its key space filled and a warm-up run (a tenth of the requests) "
                   "discarded; closed-loop load")
    metrics = (
        Metric("ops_per_s", "1/s", True,
               f"requests answered per second (redis-benchmark's throughput); {CLOSED}"),
        Metric("p50_ms", "ms", False,
               f"median request latency (redis-benchmark's HdrHistogram); {CLOSED}, so the "
               "requests a stalled server would have delayed were never sent (trial detail: "
               "omitted_estimate)"),
        Metric("p99_ms", "ms", False,
               f"99th percentile request latency (needs >= 10,000 requests); {CLOSED}, so the "
               "requests a stalled server would have delayed were never sent (trial detail: "
               "omitted_estimate)"),
    )
    tools = ("redis-server", "redis-cli", "redis-benchmark")
    packages = ("redis-server", "redis-tools")
    needs = ("scratch",)
    # Felter et al.: 50 connections, 500k requests, 50-byte values
    defaults = {"test": "get", "pipeline": 1, "clients": 50, "requests": 500_000, "data": 50,
                "keyspace": 100_000, "where": "loopback"}
    quick = {"requests": 100_000}

    def check(self, params):
        one_of("redis", params, "where", WHERE)
        one_of("redis", params, "test", TESTS)
        in_ranges("redis", params, RANGES)

    def support(self, params) -> Supported:
        """The percentiles every trial of this case keeps (from its requests)."""
        return supported(QUANTILES, params["requests"],
                         f"redis {params['test']}, {params['requests']:,} requests")

    def memory_need(self, params):
        """The filled key space (value, key and redis's per-key overhead) and the server."""
        return params["keyspace"] * (params["data"] + 100) + 16 * 2**20

    def timeout(self, params):
        """Generous: 500 requests/s (a slow emulated guest), and 2,000 keys/s to fill.
        redis-benchmark 7.0.15 does not exit when its server dies; this ends it."""
        requests = params["requests"] + warmup_requests(params)
        return 120.0 + requests / 500.0 + params["keyspace"] / 2000.0

    def client(self, params, port: int, requests: int, address: str = LOOPBACK) -> list[str]:
        """redis-benchmark's command line for `requests` requests of the case."""
        return ["redis-benchmark", "-h", address, "-p", str(port), "-t", params["test"],
                "-n", str(requests), "-c", str(params["clients"]), "-d", str(params["data"]),
                "-r", str(params["keyspace"]), "-P", str(params["pipeline"])]

    def served(self, params, scratch: str, port: int, address: str = LOOPBACK) -> Served:
        """The trial's server, fill, warm-up and client (pure). Ready means the unix socket
        answers: redis binds its TCP port before it makes the socket, so the port is this
        server's, never another's that was there first.

        At `address` other than loopback (where=host), the environment's part ends after the
        fill: the host side drives the warm-up and the run, and the script's "client" holds
        the server until the host side pushes to HELD (or the trial's timeout passes)."""
        server = ["redis-server", "--bind", address, "--port", str(port),
                  "--unixsocket", SOCKET, "--unixsocketperm", "700", "--save", "",
                  "--appendonly", "no", "--daemonize", "no", "--dir", "{work}"]
        cli = ["redis-cli", "-s", SOCKET]
        fill = cli + ["eval", FILL, "0", str(params["keyspace"]), str(params["data"])]
        if address == LOOPBACK:
            return Served(server=server, ready=cli + ["ping"],
                          warmup=[fill, self.client(params, port, warmup_requests(params))],
                          client=self.client(params, port, params["requests"]), scratch=scratch)
        return Served(server=server + ["--protected-mode", "no"], ready=cli + ["ping"],
                      warmup=[fill, cli + ["set", READY, "1"]],
                      client=cli + ["blpop", HELD, f"{self.timeout(params) + HOLD_S:.0f}"],
                      scratch=scratch)

    @staticmethod
    def pick_port() -> int:
        """The trial's own port (a collision fails the trial: its server exits, said so)."""
        return random.SystemRandom().randrange(*PORTS)

    warmup_size = staticmethod(warmup_requests)

    def argv(self, params, env):
        return self.served(params, env.scratch_dir(), self.pick_port()).argv()

    def parse(self, stdout):
        return parse_redis_benchmark(stdout)

    def requirements(self, params):
        return self.needs + (("net_path",) if params["where"] == "host" else ())

    def run_trial(self, env, params, start_at=None, slot_s=None):
        if params["where"] == "host":
            return self.finish(host_trial(self, env, params), params)
        return self.finish(super().run_trial(env, params, start_at, slot_s), params)

    def finish(self, outcome, params):
        """A finished run's outcome checked against the case: the percentiles it keeps, what
        its closed loop held back; a run of other requests than the case's fails."""
        if not outcome.ok:
            return outcome
        report = read_redis_benchmark(outcome.stdout)
        if report.requests != params["requests"] or report.test.lower() != params["test"]:
            outcome.error = (f"redis-benchmark ran {report.requests:,} {report.test} requests, "
                             f"not the case's {params['requests']:,} {params['test']}")
            outcome.partial, outcome.values = outcome.values, {}
            return outcome
        support = self.support(params)
        outcome.values = {k: v for k, v in outcome.values.items()
                          if k == "ops_per_s" or k in support.kept}
        outcome.warnings += support.warnings()
        outcome.detail.update({"loop": "closed",
                               "omitted_estimate": omitted_estimate(report.histogram)})
        return outcome
