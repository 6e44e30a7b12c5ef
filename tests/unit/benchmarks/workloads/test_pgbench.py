"""pgbench: the parsers on output captured from Debian 12's pgbench 15.20 (normal, --rate,
interrupted, aborted, failed), the log summary run by the real awk/sort, parameters, and
the trial script built."""
from __future__ import annotations

import math
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from virtbench.core.errors import VirtbenchError
from virtbench.machinery.host.tools import PACKAGES
from virtbench.measure.benchmarks import REGISTRY
from virtbench.measure.benchmarks.base import ParseError
from virtbench.measure.benchmarks.workloads import pgbench as pg
from virtbench.measure.benchmarks.workloads.pgbench_output import (
    parse_latency_log, parse_pgbench, parse_trial, rate_kept)
from virtbench.measure.environments.capacity import memory_refusal

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "workloads" / "pgbench"
BENCH = REGISTRY["pgbench"]


def fixture(name: str) -> str:
    assert (FIX / f"{name}.source").exists(), f"{name} has no .source note"
    return (FIX / f"{name}.txt").read_text()


# -- one pgbench run ---------------------------------------------------------------------
@pytest.mark.parametrize("name, tps, transactions", [
    ("tpcb-normal", 238.964585, 712),
    ("select-only-normal", None, None),
])
def test_a_normal_run_gives_its_tps(name, tps, transactions):
    text = fixture(name)
    out = parse_pgbench(text)
    line = next(x for x in text.splitlines() if x.startswith("tps = "))
    assert out["tps"] == float(line.split()[2])
    assert out["duration_s"] == 3 and out["failed"] == 0
    if tps is not None:
        assert (out["tps"], out["transactions"]) == (tps, transactions)
    assert "lag_avg_ms" not in out


def test_a_rate_run_gives_its_schedule_lag():
    out = parse_pgbench(fixture("tpcb-rate"))
    assert out["transactions"] == 286
    assert (out["lag_avg_ms"], out["lag_max_ms"]) == (24.678, 192.828)


@pytest.mark.parametrize("name, says", [
    ("no-server", 'pgbench: error: connection to server on socket "/tmp/wl-pgbench/nothing/'
                  '.s.PGSQL.25432" failed: No such file or directory'),
    ("bad-scale", "pgbench: error: -s/--scale must be in range 1..2147483647"),
    ("no-tables", "pgbench: error: could not count number of branches: ERROR:  relation "
                  '"pgbench_branches" does not exist'),
    ("killed-term", "no 'tps = ' line in pgbench's output: it did not finish"),
    ("aborted-server-died", "pgbench: error: Run was aborted; the above results are incomplete."),
    ("aborted-stdout-only", "pgbench processed 615 transactions, fewer than half of tps 320.2 x "
                            "5 s: the run ended early"),
])
def test_a_failed_or_interrupted_run_is_one_line_never_a_number(name, says):
    with pytest.raises(ParseError) as err:
        parse_pgbench(fixture(name))
    assert str(err.value) == says
    assert "\n" not in str(err.value)


def test_failed_transactions_are_refused():
    text = fixture("tpcb-normal").replace("failed transactions: 0 (0.000%)",
                                          "failed transactions: 3 (0.300%)")
    with pytest.raises(ParseError, match="3 transactions failed"):
        parse_pgbench(text)


# -- the trial's whole output --------------------------------------------------------------
def test_a_quick_trial_gives_tps_and_the_kept_percentile_only():
    values = parse_trial(fixture("trial-tpcb-quick"))
    assert values == {"tps": 368.408995, "p50_ms": 7.098}
    assert set(parse_trial(fixture("trial-select-only-quick"))) == {"tps", "p50_ms"}


def test_a_trial_whose_server_died_is_refused():
    with pytest.raises(ParseError, match="Run was aborted"):
        parse_trial(fixture("trial-server-died"))


@pytest.mark.parametrize("cut_after, says", [
    ("== virtbench pgbench: latency run", "the latency run did not start"),
    ("== virtbench pgbench: latency log", "no latency log line"),
    ("== virtbench pgbench: throughput run", "the throughput run did not start"),
    ("== virtbench pgbench: plan", "no plan line"),
])
def test_a_trial_cut_short_misses_what_its_plan_names(cut_after, says):
    text = fixture("trial-tpcb-quick")
    with pytest.raises(ParseError, match=says):
        parse_trial(text[:text.index(cut_after)])


def test_a_latency_log_without_transactions_is_refused():
    with pytest.raises(ParseError, match="logged no transactions"):
        parse_latency_log("transactions=0 not_done=0 q0.5_us=0")
    with pytest.raises(ParseError, match="malformed"):
        parse_latency_log("transactions=x")


def not_kept_trial() -> str:
    """A trial's output around the real run that could not keep 2000/s."""
    run = fixture("tpcb-rate-not-kept")
    return (fixture("trial-tpcb-quick").split("== virtbench pgbench: latency run")[0]
            + "== virtbench pgbench: latency run, 2000 transactions/s offered for 3 s "
              "(open loop)\n" + run
            + "== virtbench pgbench: latency log: transactions=1049 not_done=0 "
              "q0.5_us=1400000\n")


def test_a_rate_not_kept_is_said_and_a_kept_one_is_not():
    line = rate_kept(not_kept_trial())
    assert line.startswith("pgbench latency run: 1049 of the 6000 transactions offered "
                           "(2000/s for 3 s) were done, 0 not done; schedule lag avg 1276.6 ms")
    assert rate_kept(fixture("trial-tpcb-quick")) is None
    assert BENCH.extra_warnings(not_kept_trial()) == [("rate_not_kept", line)]


def test_transactions_not_done_are_said_even_at_the_rate():
    text = fixture("trial-tpcb-quick").replace("not_done=0", "not_done=4")
    assert "4 not done" in rate_kept(text)


# -- the log's summary, by the real awk and sort ------------------------------------------
def test_the_summary_is_the_nearest_rank_of_the_logged_latencies(tmp_path):
    log = (FIX / "tpcb-rate.log").read_text()
    assert (FIX / "tpcb-rate.log.source").exists()
    (tmp_path / "txlog").mkdir()
    (tmp_path / "txlog" / "tx.1").write_text(log + "9 9 skipped 0 1795933788 700000 9\n")
    kept = {"p50_ms": 0.5, "p99_ms": 0.99}
    script = "w=$1\n" + "\n".join(pg.summary_lines(kept)) + "\n"
    r = subprocess.run(["sh", "-c", script, "x", str(tmp_path)], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    latencies = sorted(int(line.split()[2]) for line in log.splitlines())
    n = len(latencies)
    want = {f"p{q}": latencies[math.ceil(q / 100 * n) - 1] / 1000 for q in (50, 99)}
    out = parse_latency_log(r.stdout.split("latency log: ")[1])
    assert out == {"transactions": n, "not_done": 1, "p50_ms": want["p50"],
                   "p99_ms": want["p99"]}


# -- parameters and the script ----------------------------------------------------------
def test_where_host_is_refused_in_the_words_asked():
    with pytest.raises(VirtbenchError) as err:
        BENCH.params({"where": "host"})
    assert str(err.value) == "where=host is not built yet for pgbench; use where=loopback"


@pytest.mark.parametrize("given, says", [
    ({"where": "guest"}, "where='guest' is not one of loopback, host"),
    ({"mode": "tpcc"}, "mode='tpcc' is not one of tpcb, select-only"),
    ({"clients": 0}, "clients=0 is outside 1..90"),
    ({"clients": 91}, "clients=91 is outside 1..90 (PostgreSQL's default max_connections)"),
    ({"scale": 0}, "scale=0 is outside 1..100,000"),
    ({"rate": 0}, "rate=0 is outside 1..1,000,000"),
    ({"seconds": 0}, "seconds=0 is outside 1..3,600"),
    ({"warmup": -1}, "warmup=-1 is outside 0..3,600"),
])
def test_bad_parameters_are_one_line(given, says):
    with pytest.raises(VirtbenchError) as err:
        BENCH.params(given)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_a_scale_beyond_the_environments_memory_is_refused():
    need = BENCH.memory_need(BENCH.params({"scale": 1000}))
    assert need == 1000 * 16 * 2**20 + 256 * 2**20
    line = memory_refusal("qemu:mem=2G", 1, need, 2 * 2**30, False, "pgbench")
    assert line.startswith("environment qemu:mem=2G: pgbench needs 15.88 GiB")
    assert memory_refusal("native", 1, BENCH.memory_need(BENCH.params()), 2 * 2**30, True,
                          "pgbench") is None


def test_the_percentiles_kept_follow_the_parameters():
    assert BENCH.support(BENCH.params()).kept == {"p50_ms": 0.5, "p99_ms": 0.99}
    assert BENCH.support(BENCH.params(quick=True)).kept == {"p50_ms": 0.5, "p99_ms": 0.99}
    # 12,000 offered at quick: at least 10,800 done when the rate is kept (p99: 10,000)
    assert BENCH.support(BENCH.params({"rate": 2000, "seconds": 5})).kept == {"p50_ms": 0.5}
    short = BENCH.support(BENCH.params({"rate": 100, "seconds": 3}))
    assert short.kept == {"p50_ms": 0.5}
    assert short.warnings()[0][0] == "percentile_left_out"
    assert "270 requests" in short.left_out and "300 transactions offered" in short.left_out
    assert BENCH.support(BENCH.params({"rate": 10, "seconds": 10})).kept == {}


def test_the_script_the_trial_runs():
    params = BENCH.params({"mode": "select-only"}, quick=True)
    s = BENCH.served(params)
    assert s.server_user == "postgres" and s.scratch == "/var/tmp"
    assert s.setup[0][0] == f"{pg.BIN}/initdb" and "--no-sync" in s.setup[0]
    assert s.server == [f"{pg.BIN}/postgres", "-D", "{work}/data", "-k", "{work}", "-c",
                        "listen_addresses=", "-p", "5432"]
    assert s.warmup[0][-4:] == ["-q", "-s", "1", "postgres"]
    assert s.warmup[1][-3:] == ["-T", "1", "postgres"]
    assert "select-only" in s.warmup[1]
    client = s.client[2]
    assert "-b select-only -c 4" in client and "--rate 2000 -l" in client
    assert "plan: throughput latency" in client
    script = s.script()
    assert "runuser -u postgres -- /usr/lib/postgresql/15/bin/initdb" in script
    no_warmup = BENCH.served(BENCH.params({"warmup": 0}))
    assert len(no_warmup.warmup) == 1
    nothing_kept = pg.client_script(BENCH.params({"rate": 10, "seconds": 10}), {})
    assert "--rate" not in nothing_kept and "plan: throughput'" in nothing_kept


def test_registered_with_its_package_and_tools():
    assert BENCH.family == "workload" and BENCH.packages == ("postgresql-15",)
    assert {PACKAGES[t] for t in BENCH.tools if t.startswith(pg.BIN)} == {"postgresql-15"}
    assert all(t in PACKAGES for t in BENCH.tools)


def run_with(stdout: str, exit_code: int = 0):
    result = SimpleNamespace(stdout=stdout, stderr="", exit=exit_code, wall_s=12.0,
                             timed_out=False, user_s=0.0, sys_s=0.0)
    return SimpleNamespace(exec=lambda argv, timeout: result)


def test_a_trial_says_the_percentiles_left_out_and_a_rate_not_kept():
    # the fixtures' own parameters: 100/s for 2 s, 200 transactions (p99 left out)
    params = BENCH.params({"clients": 4, "seconds": 2, "scale": 1, "rate": 100, "warmup": 1})
    ok = BENCH.run_trial(run_with(fixture("trial-tpcb-quick")), params)
    assert ok.error is None and set(ok.values) == {"tps", "p50_ms"}
    assert [k for k, _ in ok.warnings] == ["percentile_left_out"]
    assert ok.detail == {"loop": "open"}
    late = BENCH.run_trial(run_with(not_kept_trial()), params)
    assert sorted(k for k, _ in late.warnings) == ["percentile_left_out", "rate_not_kept"]
    died = BENCH.run_trial(run_with(fixture("trial-server-died"), 2), params)
    assert died.error == ("exit status 2: pgbench: error: Run was aborted; the above results "
                          "are incomplete.")
    assert died.warnings == []


def test_a_guest_behind_its_rate_leaves_out_the_percentiles_it_did_too_few_for():
    """A TCG guest did 56 of the 200 transactions offered: p50 needs 200, so it is left out
    of the trial and the rate_not_kept line says so; tps stays."""
    text = fixture("trial-tcg-behind")
    assert parse_trial(text) == {"tps": 27.695732}
    line = rate_kept(text)
    assert "56 of the 200 transactions offered" in line
    assert line.endswith("the percentiles count a queue that grew; p50_ms left out "
                         "(56 transactions done); lower rate")
