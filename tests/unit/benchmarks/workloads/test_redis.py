"""The redis workload: its parser on redis-benchmark 7.0.15's captured output (a number or one
line, never a wrong number), its parameters, the loopback script it builds and a trial's
outcome from a stand-in environment."""
from __future__ import annotations

import shlex
import threading

import pytest

from virtbench.core.errors import AgentError, VirtbenchError
from virtbench.machinery.agent.transport import ExecResult
from virtbench.machinery.host.net.netpath_types import NetPath
from virtbench.measure.benchmarks import REGISTRY, ParseError
from virtbench.measure.benchmarks.workloads import redis_host
from virtbench.measure.benchmarks.workloads.percentiles import omitted_estimate
from virtbench.measure.benchmarks.workloads.redis_output import (parse_redis_benchmark,
                                                                 read_redis_benchmark)

DIR = ("workloads", "redis-benchmark")


@pytest.fixture
def text(fixture_text):
    return lambda name: fixture_text(*DIR, f"{name}.txt")


@pytest.mark.parametrize("name, want", [
    # the summary's figures: throughput, p50, p99
    ("get_p1", {"ops_per_s": 5116.92, "p50_ms": 6.367, "p99_ms": 27.503}),
    ("set_p1", {"ops_per_s": 5635.07, "p50_ms": 5.663, "p99_ms": 19.231}),
    ("get_p16", {"ops_per_s": 44762.76, "p50_ms": 11.263, "p99_ms": 286.207}),
    ("set_p16", {"ops_per_s": 54377.38, "p50_ms": 11.583, "p99_ms": 161.919}),
    ("stall_get_p1", {"ops_per_s": 5587.53, "p50_ms": 3.735, "p99_ms": 26.063}),
])
def test_a_finished_run_gives_its_summary(text, name, want):
    assert parse_redis_benchmark(text(name)) == want


@pytest.mark.parametrize("name, line", [
    ("sigint", "redis-benchmark did not finish (interrupted, killed, or its server gone): no "
               "summary; its last progress line said GET 20,985 requests/s so far"),
    ("sigkill", "redis-benchmark did not finish (interrupted, killed, or its server gone): no "
                "summary; its last progress line said GET 10,264 requests/s so far"),
    ("serverdied", "redis-benchmark did not finish (interrupted, killed, or its server gone): "
                   "no summary; its last progress line said GET 33,413 requests/s so far"),
    ("refused", "no redis-benchmark report in the output (no '====== TEST ======' section): "
                "it did not run, or did not reach its server"),
    ("badarg", "redis-benchmark refused its arguments: Invalid option \"--bogus\" or option "
               "argument missing"),
    ("csv_get", "redis-benchmark --csv output: it has no latency histogram; virtbench runs "
                "redis-benchmark in its default format"),
])
def test_an_unfinished_or_failed_run_is_one_line(text, name, line):
    with pytest.raises(ParseError) as caught:
        parse_redis_benchmark(text(name))
    assert str(caught.value) == line


def test_the_histogram_is_the_cumulative_distribution_differenced(text):
    report = read_redis_benchmark(text("get_p1"))
    assert report.test == "GET" and report.requests == 100_000
    assert sum(n for _, n in report.histogram) == 100_000
    assert report.histogram[0] == (0.303, 52) and report.histogram[1] == (0.407, 215)
    assert report.histogram[-1] == (186.111, 5)
    assert report.latency_ms["max"] == 185.471


def test_a_stall_shows_in_what_the_closed_loop_held_back(text):
    calm = omitted_estimate(read_redis_benchmark(text("get_p1")).histogram)
    stalled = omitted_estimate(read_redis_benchmark(text("stall_get_p1")).histogram)
    assert (calm, stalled) == (20115, 83098)


def test_two_tests_in_one_output_are_refused(text):
    with pytest.raises(ParseError, match=r"^redis-benchmark ran 2 tests \(GET, SET\); "):
        parse_redis_benchmark(text("get_p1") + text("set_p1"))


@pytest.mark.parametrize("cut, match", [
    ("\nSummary:", "no throughput summary line"),
    ("Cumulative distribution of latencies:", "no 'Cumulative distribution of latencies'"),
    ("  latency summary", "no 'latency summary"),
])
def test_a_report_cut_short_is_refused(text, cut, match):
    whole = text("get_p1").replace("\r", "\n")
    head = whole[:whole.index(cut)]
    if cut == "Cumulative distribution of latencies:":     # the summary kept after it
        head += whole[whole.index("\nSummary:"):]
    with pytest.raises(ParseError, match=match):
        parse_redis_benchmark(head)


@pytest.mark.parametrize("old, new, match", [
    ("100000 requests completed", "100001 requests completed",
     "histogram counts 100000 requests of the 100001"),
    ("0.216     6.367", "0.216     27.600", "p50 above p99"),
    ("0.216     6.367", "0.216     nan", "lacks a p50"),
    ("5116.92 requests per second", "0.00 requests per second", "at 0.0 requests/s"),
    ("(cumulative count 267)", "(cumulative count 2)", "counts go down"),
])
def test_inconsistent_figures_are_refused_not_reported(text, old, new, match):
    bad = text("get_p1")
    assert old in bad
    with pytest.raises(ParseError, match=match):
        parse_redis_benchmark(bad.replace(old, new, 1))


# -- parameters ----------------------------------------------------------------------------

def test_defaults_follow_felter_and_quick_still_supports_p99():
    bench = REGISTRY["redis"]
    full, quick = bench.params(), bench.params(quick=True)
    assert full == {"test": "get", "pipeline": 1, "clients": 50, "requests": 500_000,
                    "data": 50, "keyspace": 100_000, "where": "loopback"}
    assert quick["requests"] == 100_000 and quick["requests"] >= 10_000
    assert bench.family == "workload" and bench.packages == ("redis-server", "redis-tools")


@pytest.mark.parametrize("given, line", [
    ({"where": "lan"}, "benchmark redis: where='lan' is not one of loopback, host; use where=loopback"),
    ({"test": "incr"}, "benchmark redis: test='incr' is not one of get, set; use test=get"),
    ({"pipeline": 0}, "benchmark redis: pipeline=0 is outside 1..1,024; give one in that range"),
    ({"clients": 1001}, "benchmark redis: clients=1001 is outside 1..1,000; give one in that range"),
    ({"requests": 999}, "benchmark redis: requests=999 is outside 1,000..100,000,000; give one in that range"),
    ({"data": 0}, "benchmark redis: data=0 is outside 1..65,536; give one in that range"),
    ({"keyspace": 0}, "benchmark redis: keyspace=0 is outside 1..10,000,000; give one in that range"),
])
def test_bad_parameters_are_one_line(given, line):
    with pytest.raises(VirtbenchError) as caught:
        REGISTRY["redis"].params(given)
    assert str(caught.value) == line


def test_the_percentiles_kept_follow_the_requests():
    bench = REGISTRY["redis"]
    assert set(bench.support(bench.params({"requests": 10_000})).kept) == {"p50_ms", "p99_ms"}
    few = bench.support(bench.params({"requests": 5_000}))
    assert set(few.kept) == {"p50_ms"}
    assert few.warnings() == [("percentile_left_out", few.left_out)]
    assert few.left_out.startswith("redis get, 5,000 requests: p99_ms left out")


# -- the script ----------------------------------------------------------------------------

def test_the_loopback_script_runs_the_case_against_its_own_server():
    bench = REGISTRY["redis"]
    params = bench.params({"test": "set", "pipeline": 16})
    served = bench.served(params, "/scratch", 23456)
    assert served.server == ["redis-server", "--bind", "127.0.0.1", "--port", "23456",
                             "--unixsocket", "{work}/redis.sock", "--unixsocketperm", "700",
                             "--save", "", "--appendonly", "no", "--daemonize", "no",
                             "--dir", "{work}"]
    assert served.ready == ["redis-cli", "-s", "{work}/redis.sock", "ping"]
    case = ["redis-benchmark", "-h", "127.0.0.1", "-p", "23456", "-t", "set", "-c", "50",
            "-d", "50", "-r", "100000", "-P", "16"]
    assert served.client == case[:7] + ["-n", "500000"] + case[7:]
    fill, warm = served.warmup
    assert fill[:4] == ["redis-cli", "-s", "{work}/redis.sock", "eval"]
    assert fill[5:] == ["0", "100000", "50"] and "key:%012d" in fill[4]
    assert warm == case[:7] + ["-n", "50000"] + case[7:]
    assert served.scratch == "/scratch"
    script = served.script()
    assert "--save ''" in script and shlex.quote(fill[4]) in script


def test_each_trial_gets_a_port_below_the_ephemeral_range():
    class Env:
        def scratch_dir(self):
            return "/scratch"
    bench = REGISTRY["redis"]
    ports = set()
    for _ in range(20):
        script = bench.argv(bench.params(quick=True), Env())[2]
        ports.add(int(script.split("--port ")[1].split()[0]))
    assert all(20000 <= p < 32768 for p in ports) and len(ports) > 1
    assert bench.timeout(bench.params(quick=True)) == 120 + 110_000 / 500 + 100_000 / 2000


# -- a trial from a stand-in environment ---------------------------------------------------

class FakeEnv:
    def __init__(self, result: ExecResult):
        self.result, self.ran = result, []

    def scratch_dir(self):
        return "/scratch"

    def exec(self, argv, timeout, env=None):
        self.ran.append((argv, timeout))
        return self.result


def trial(stdout: str, params: dict, exit: int = 0, stderr: str = ""):
    bench = REGISTRY["redis"]
    env = FakeEnv(ExecResult(exit=exit, stdout=stdout, stderr=stderr, wall_s=2.0))
    return bench.run_trial(env, bench.params(params)), env


def test_a_trial_keeps_its_case_metrics_and_says_what_the_loop_held_back(text):
    outcome, env = trial(text("stall_get_p1"), {"requests": 100_000})
    assert outcome.ok, outcome.error
    assert outcome.values == {"ops_per_s": 5587.53, "p50_ms": 3.735, "p99_ms": 26.063}
    assert outcome.detail == {"loop": "closed", "omitted_estimate": 83098}
    assert outcome.warnings == []
    argv, timeout = env.ran[0]
    assert argv[:2] == ["sh", "-c"] and "redis-benchmark" in argv[2]
    assert timeout == REGISTRY["redis"].timeout(REGISTRY["redis"].params({"requests": 100_000}))


def test_a_case_too_small_for_p99_leaves_it_out_with_a_warning(text):
    outcome, _ = trial(text("get_n5000"), {"requests": 5_000})
    assert outcome.ok, outcome.error
    assert outcome.values == {"ops_per_s": pytest.approx(outcome.values["ops_per_s"]),
                              "p50_ms": 3.959}
    assert "p99_ms" in parse_redis_benchmark(text("get_n5000"))    # printed, not kept
    [(kind, line)] = outcome.warnings
    assert kind == "percentile_left_out" and line.startswith("redis get, 5,000 requests: p99_ms")


def test_a_run_of_other_requests_than_the_case_fails_the_trial(text):
    outcome, _ = trial(text("get_p1"), {"requests": 200_000})
    assert outcome.error == ("redis-benchmark ran 100,000 GET requests, not the case's "
                             "200,000 get")
    assert outcome.values == {} and outcome.partial["ops_per_s"] == 5116.92
    outcome, _ = trial(text("get_p1"), {"requests": 100_000, "test": "set"})
    assert outcome.error.endswith("not the case's 100,000 set")


def test_a_failed_step_is_the_trials_error(text):
    outcome, _ = trial("", {}, exit=98, stderr="virtbench: the server exited before it "
                                               "answered\nFailed listening on port 23456 (TCP)")
    assert outcome.error == "exit status 98: Failed listening on port 23456 (TCP)"
    outcome, _ = trial(text("sigkill"), {}, exit=0)
    assert outcome.error.startswith("unparsable output: redis-benchmark did not finish")


# -- where=host: the server in a stand-in environment, the client at its host side -----------

class HostSide:
    """The host side's commands, answered as redis-cli and redis-benchmark would."""
    def __init__(self, bench_out: str, filled: bool = True):
        self.bench_out, self.filled, self.ran = bench_out, filled, []
        self.done = threading.Event()

    def run(self, argv, timeout, input=None):
        self.ran.append(argv)
        if "redis-benchmark" in argv:
            return ExecResult(exit=0, stdout=self.bench_out, stderr="", wall_s=1.0)
        if argv[-2:] == ["get", "virtbench:ready"]:
            return ExecResult(exit=0, stdout="1\n" if self.filled else "\n", stderr="", wall_s=0)
        if argv[-3:] == ["rpush", "virtbench:held", "1"]:
            self.done.set()
        return ExecResult(exit=0, stdout="1\n", stderr="", wall_s=0)


class HostEnv(FakeEnv):
    def __init__(self, host: HostSide, inner: ExecResult, hold: bool = True):
        super().__init__(inner)
        self.host, self.hold = host, hold

    def net_path(self):
        return NetPath(env_address="10.1.0.2", host_address="10.1.0.1",
                       host_prefix=["ip", "netns", "exec", "side"],
                       env_prefix=["ip", "netns", "exec", "env"])

    def exec(self, argv, timeout, env=None):
        self.ran.append((argv, timeout))
        if self.hold:                  # the server's command ends when the host side is done
            self.host.done.wait(10)
        return self.result


def host_params(**given):
    return REGISTRY["redis"].params({"where": "host", **given})


def test_where_host_drives_the_server_in_the_environment_from_the_host_side(text):
    host = HostSide(text("get_p1"))
    env = HostEnv(host, ExecResult(exit=0, stdout="", stderr="", wall_s=3.0))
    outcome = REGISTRY["redis"].run_trial(env, host_params(requests=100_000))
    assert outcome.ok, outcome.error
    assert outcome.values == {"ops_per_s": 5116.92, "p50_ms": 6.367, "p99_ms": 27.503}
    assert outcome.detail == {"loop": "closed", "omitted_estimate": 20115}
    [(argv, _)] = env.ran
    assert argv[:4] == ["ip", "netns", "exec", "env"] and argv[4:6] == ["sh", "-c"]
    script = argv[6]
    assert "--bind 10.1.0.2" in script and "--protected-mode no" in script
    assert "blpop virtbench:held" in script and "set virtbench:ready 1" in script
    runs = [a for a in host.ran if "redis-benchmark" in a]
    assert [a[a.index("-n") + 1] for a in runs] == ["10000", "100000"]      # warm-up, then run
    assert all(a[:4] == ["ip", "netns", "exec", "side"] and "10.1.0.2" in a for a in runs)
    assert host.ran[-1][-3:] == ["rpush", "virtbench:held", "1"]
    assert REGISTRY["redis"].requirements(host_params()) == ("scratch", "net_path")
    assert REGISTRY["redis"].requirements(REGISTRY["redis"].params()) == ("scratch",)


def test_where_host_says_why_the_server_in_the_environment_failed(text):
    host = HostSide(text("get_p1"), filled=False)
    env = HostEnv(host, ExecResult(exit=98, stdout="", wall_s=0.1, stderr=(
        "virtbench: the server exited before it answered\nFailed listening on port 1 (TCP)")),
        hold=False)
    outcome = REGISTRY["redis"].run_trial(env, host_params())
    assert outcome.error == ("the server in the environment: exit status 98: Failed listening "
                             "on port 1 (TCP)")
    assert not [a for a in host.ran if "redis-benchmark" in a]


def test_where_host_gives_up_on_a_server_never_filled(text, monkeypatch):
    monkeypatch.setattr(redis_host, "READY_S", 1.0)
    host = HostSide(text("get_p1"), filled=False)
    env = HostEnv(host, ExecResult(exit=0, stdout="", stderr="", wall_s=1.0))
    outcome = REGISTRY["redis"].run_trial(env, host_params(keyspace=1))
    assert outcome.error == "the redis server in the environment was not filled after 1 s"
    assert host.ran[-1][-3:] == ["rpush", "virtbench:held", "1"]       # released all the same


def test_where_host_fails_on_a_failed_warm_up(text):
    host = HostSide("")
    host.run_real = host.run
    host.run = lambda argv, timeout, input=None: (
        ExecResult(exit=1, stdout="", stderr="Invalid option", wall_s=0)
        if "redis-benchmark" in argv else host.run_real(argv, timeout))
    env = HostEnv(host, ExecResult(exit=0, stdout="", stderr="", wall_s=1.0))
    outcome = REGISTRY["redis"].run_trial(env, host_params())
    assert outcome.error == ("the warm-up run at the host side failed: exit status 1: "
                             "Invalid option")


def test_where_host_passes_a_lost_environment_on(text):
    class Lost(HostEnv):
        def exec(self, argv, timeout, env=None):
            raise AgentError("the agent went away")
    with pytest.raises(AgentError, match="the agent went away"):
        REGISTRY["redis"].run_trial(Lost(HostSide(text("get_p1"), filled=False), None),
                                    host_params())
