"""pgbench: PostgreSQL 15 under a TPC-B-like or a select-only load, in the environment.

Each trial is one command of the environment (workloads/served.py): a fresh cluster made by
`initdb` in a new directory, `postgres` on a unix socket only (no TCP), `pgbench -i` at the
trial's scale, a warm-up run whose figures are discarded, then two measured runs:

1. **throughput** (`tps`): pgbench unthrottled for `seconds`, a closed loop (each client sends
   its next transaction when the last one commits);
2. **latency** (`p50_ms`, `p99_ms`): pgbench at a fixed offered rate (`--rate`, transactions
   scheduled in advance, a Poisson process) for `seconds`, with a per-transaction log (`-l`).
   With `--rate` pgbench measures a transaction's latency from when it was *scheduled*, so
   the time it waited behind a stalled server counts (an open loop: no coordinated omission).

The percentiles are computed in the environment, not here: the log has a line per
transaction (rate x seconds of them: 12,000 at the defaults, millions at a high rate), and it
would cross the environment's channel and land in the store as the trial's stdout. A `sort -n`
and two `awk` passes over it print one summary line instead (nearest rank: the q-quantile is
the ceil(q n)-th smallest of n latencies), which parse_latency_log reads. Which percentiles a
case computes is decided from its parameters (rate x seconds transactions offered,
percentiles.py), so every trial of a case has the same metrics.

The server and initdb run as the `postgres` user (PostgreSQL refuses root); the cluster lives
in a new directory under /var/tmp (on the environment's root file system in every Debian
release, never a tmpfs; the environment's scratch directory may be private to root, where
the postgres user could not reach it), which is removed after the trial. fsync and
synchronous_commit stay at their defaults (on): a commit waits for its WAL flush, as a
PostgreSQL service's would, so the TPC-B-like mode measures the environment's flush path too;
select-only writes nothing.
"""
from __future__ import annotations

import shlex
from typing import Any

from ..base import Benchmark, Metric
from .checks import in_ranges, one_of
from .percentiles import supported
from .pgbench_output import (KEPT, LATENCY, LOG, MARK, PLAN, THROUGHPUT, parse_trial,
                             rate_kept)
from .served import Served

BIN = "/usr/lib/postgresql/15/bin"
USER = "postgres"
# the socket's name only (.s.PGSQL.5432 in the trial's own directory): no TCP port is opened
PORT = "5432"
SCRATCH = "/var/tmp"
MODES = {"tpcb": "tpcb-like", "select-only": "select-only"}
QUANTILES = (0.5, 0.99)
# PostgreSQL's default max_connections is 100, 3 of them kept for superusers
MAX_CLIENTS = 90
# bytes: a scale unit of pgbench's tables and indexes (about 16 MB), and the server itself
# (128 MB of shared_buffers, its processes and the clients')
SCALE_BYTES, SERVER_BYTES = 16 * 2**20, 256 * 2**20
RANGES = {"clients": (1, MAX_CLIENTS), "seconds": (1, 3600), "scale": (1, 100_000),
          "rate": (1, 1_000_000), "warmup": (0, 3600)}


class Pgbench(Benchmark):
    name = "pgbench"
    family = "workload"
    description = ("PostgreSQL 15 with pgbench in the environment (TPC-B-like or select-only): "
                   "a fresh cluster per trial, a warm-up run discarded, tps unthrottled (closed "
                   "loop) and p50/p99 latency at a fixed offered rate (open loop)")
    metrics = (
        Metric("tps", "tx/s", True, "transactions per second, pgbench unthrottled for `seconds` "
               "(closed loop: each client sends when its last transaction commits)"),
        Metric("p50_ms", "ms", False, "median transaction latency at `rate` transactions/s "
               "offered (open loop: counted from the scheduled start, schedule lag included)"),
        Metric("p99_ms", "ms", False, "99th-percentile transaction latency at `rate` "
               "transactions/s offered (open loop: counted from the scheduled start, schedule "
               "lag included)"),
    )
    tools = (f"{BIN}/initdb", f"{BIN}/postgres", f"{BIN}/pg_isready", f"{BIN}/pgbench",
             "runuser", "awk", "sort")
    packages = ("postgresql-15",)
    defaults = {"mode": "tpcb", "clients": 8, "seconds": 60, "scale": 10, "rate": 200,
                "warmup": 10, "where": "loopback"}
    # quick: select-only (no commit waits on the disk's flush) at 2,000/s for 6 s: 12,000
    # transactions offered, 10,800 done at least when the rate is kept, which keeps p99
    # (percentiles.py: 10,000)
    quick = {"mode": "select-only", "clients": 4, "seconds": 6, "scale": 1, "rate": 2000,
             "warmup": 1}

    def check(self, params: dict[str, Any]) -> None:
        one_of("pgbench", params, "where", ("loopback",), unbuilt=("host",))
        one_of("pgbench", params, "mode", tuple(MODES))
        in_ranges("pgbench", params, RANGES,
                  why={"clients": "PostgreSQL's default max_connections"})

    def memory_need(self, params: dict[str, Any]) -> int:
        """The tables at `scale` (kept in memory: the page cache) and the server."""
        return params["scale"] * SCALE_BYTES + SERVER_BYTES

    def timeout(self, params: dict[str, Any]) -> float:
        """The runs' own seconds, and generously for initdb and pgbench -i (slow guests)."""
        return 600.0 + 30.0 * params["scale"] + params["warmup"] + 2.0 * params["seconds"]

    def support(self, params: dict[str, Any]):
        """The percentiles a case keeps: those that the transactions of a run that kept its
        rate support. pgbench's schedule is a Poisson process, so a run offered rate x
        seconds does a few more or fewer (9,996 of 10,000 here); one that kept its rate did
        at least KEPT of them, and a percentile is kept when that many support it. A trial
        that did fewer (behind its rate) leaves out what they do not support, and says so
        (rate_kept)."""
        offered = params["rate"] * params["seconds"]
        return supported(QUANTILES, int(KEPT * offered),
                         f"pgbench {params['mode']}, {offered:,} transactions offered "
                         f"({KEPT:.0%} of them done at least when the rate is kept)")

    def served(self, params: dict[str, Any]) -> Served:
        """The trial's server, setup, warm-up and client (pure)."""
        data = "{work}/data"
        connect = ["-h", "{work}", "-p", PORT, "-U", USER]
        warmup = [[f"{BIN}/pgbench", *connect, "-i", "-q", "-s", str(params["scale"]), USER]]
        if params["warmup"] > 0:
            warmup.append([f"{BIN}/pgbench", *connect, "-b", MODES[params["mode"]],
                           "-c", str(params["clients"]), "-j", str(params["clients"]),
                           "-T", str(params["warmup"]), USER])
        return Served(
            setup=[[f"{BIN}/initdb", "-D", data, "-A", "trust", "-U", USER, "-E", "UTF8",
                    "--locale=C", "--no-sync"]],
            server=[f"{BIN}/postgres", "-D", data, "-k", "{work}", "-c", "listen_addresses=",
                    "-p", PORT],
            ready=[f"{BIN}/pg_isready", "-q", "-h", "{work}", "-p", PORT],
            warmup=warmup,
            client=["sh", "-c", client_script(params, self.support(params).kept),
                    "virtbench-pgbench", "{work}"],
            scratch=SCRATCH, ready_s=120.0, server_user=USER)

    def argv(self, params: dict[str, Any], env) -> list[str]:
        return self.served(params).argv()

    def run_trial(self, env, params: dict[str, Any], start_at=None, slot_s=None):
        """A trial, and the percentiles its case leaves out said once (as a warning)."""
        outcome = super().run_trial(env, params)
        if outcome.error is None:
            outcome.warnings += self.support(params).warnings()
            outcome.detail["loop"] = "open"         # the latency run's (tps: a closed loop)
        return outcome

    def parse(self, stdout: str) -> dict[str, float]:
        return parse_trial(stdout)

    def extra_warnings(self, text: str) -> list[tuple[str, str]]:
        late = rate_kept(text)
        return [("rate_not_kept", late)] if late else []


def client_script(params: dict[str, Any], kept: dict[str, float]) -> str:
    """What runs after the warm-up, as `sh -c SCRIPT virtbench-pgbench WORKDIR` (pure):
    the throughput run, and the latency run with its log's summary when a percentile is
    kept. pgbench's stderr is merged into stdout so that its errors reach the parser;
    threads (-j) = min(clients, the environment's CPUs), as PerfKitBenchmarker and Phoronix
    do."""
    q = shlex.quote
    c, s, rate = int(params["clients"]), int(params["seconds"]), int(params["rate"])
    run = (f'"$B/pgbench" -h "$w" -p {PORT} -U {USER} -b {q(MODES[params["mode"]])} '
           f'-c {c} -j "$j" -T {s}')
    lines = ["w=$1", f"B={q(BIN)}", "j=$(nproc 2>/dev/null) || j=1",
             f'if [ "$j" -gt {c} ]; then j={c}; fi',
             f"echo {q(MARK + PLAN + 'throughput' + (' latency' if kept else ''))}",
             f"echo {q(MARK + THROUGHPUT + ', unthrottled (closed loop)')}",
             f"{run} {USER} 2>&1 || exit $?"]
    if kept:
        lines += [
            f"echo {q(f'{MARK}{LATENCY}, {rate} transactions/s offered for {s} s (open loop)')}",
            'mkdir "$w/txlog" || exit 1',
            f'{run} --rate {rate} -l --log-prefix="$w/txlog/tx" {USER} 2>&1 || exit $?',
        ] + summary_lines(kept)
    return "\n".join(lines) + "\n"


def summary_lines(kept: dict[str, float]) -> list[str]:
    """The shell lines that read the latency run's log ("$w"/txlog/tx.*, one file per
    pgbench thread) and print its one summary line (pure)."""
    quantiles = " ".join(f"{v:g}" for v in kept.values())
    return [
        # column 3: the latency in us from the scheduled start; "skipped"/"failed" else
        'bad=$(cat "$w"/txlog/tx.* | awk \'$3 !~ /^[0-9]+$/ {n++} END {print n+0}\')',
        'cat "$w"/txlog/tx.* | awk \'$3 ~ /^[0-9]+$/ {print $3}\' | sort -n | '
        f'awk -v qs={shlex.quote(quantiles)} -v bad="$bad" -v head={shlex.quote(MARK + LOG)} '
        + shlex.quote(SUMMARY_AWK),
    ]


# nearest rank over the sorted latencies: the q-quantile is the ceil(q n)-th
SUMMARY_AWK = ("{v[NR] = $1} END {line = head \"transactions=\" NR \" not_done=\" bad;"
               " n = split(qs, q, \" \"); for (i = 1; i <= n; i++) {"
               " r = q[i] * NR; k = int(r); if (r - k > 1e-9) k++; if (k < 1) k = 1;"
               " line = line \" q\" q[i] \"_us=\" (NR ? v[k] : 0) } print line }")
