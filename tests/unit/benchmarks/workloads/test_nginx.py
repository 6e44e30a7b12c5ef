"""nginx: wrk 4.1's output (captured from Debian 12's wrk with virtbench's script: normal,
interrupted, killed, failed, HTTP errors, socket errors), the parameters and the percentiles
a case keeps, the trial's script and nginx.conf, and a trial judged against its case."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from virtbench.core.errors import VirtbenchError
from virtbench.machinery.agent.transport import ExecResult
from virtbench.machinery.host.tools import PACKAGES
from virtbench.measure.benchmarks import REGISTRY
from virtbench.measure.benchmarks.base import ParseError
from virtbench.measure.benchmarks.workloads import nginx as ng
from virtbench.measure.benchmarks.workloads.wrk_output import DONE_LUA, parse_wrk

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "workloads" / "wrk"
BENCH = REGISTRY["nginx"]


def fixture(name: str) -> str:
    assert (FIX / f"{name}.source").exists(), f"{name} has no .source note"
    return (FIX / f"{name}.txt").read_text()


# -- wrk's output ------------------------------------------------------------------------
def test_a_normal_run_gives_wrks_figures_exactly():
    text = fixture("normal")
    out = parse_wrk(text)
    assert out == {"requests_per_s": 10140.55, "p50_ms": 7.034, "p99_ms": 68.016,
                   "requests": 31351.0, "seconds": 3.091646, "corrected": 43262.0,
                   "omitted": 43262.0 - 31351.0}
    # the script's exact percentiles are the ones --latency prints, to its two decimals
    printed = dict(re.findall(r"^\s+(50|99)%\s+([0-9.]+)ms$", text, re.M))
    assert (float(printed["50"]), float(printed["99"])) == (7.03, 68.02)


@pytest.mark.parametrize("name, says", [
    ("interrupted", "wrk ran 1.60 s of the 5 s asked: interrupted"),
    ("killed", "wrk printed nothing: it was killed before it finished, or did not start "
               "(its message is on stderr)"),
    ("no_server", "wrk printed nothing: it was killed before it finished, or did not start "
                  "(its message is on stderr)"),
    ("bad_argument", "no 'Running ... test @' line: wrk did not start (a bad argument or an "
                     "unreachable address; its message is on stderr)"),
    ("not_found", "30,946 of 30,946 answers were HTTP errors (status > 399): the server did "
                  "not serve the file"),
    ("server_gone", "wrk had socket errors: read 31, write 17,870"),
    ("timeouts", "wrk had socket errors: timeout 4 (a timeout is a request slower than "
                 "--timeout)"),
])
def test_a_failed_or_cut_run_is_one_line_never_a_number(name, says):
    with pytest.raises(ParseError) as err:
        parse_wrk(fixture(name))
    assert str(err.value) == says and "\n" not in str(err.value)


def test_every_fixture_is_tested():
    tested = {"normal", "interrupted", "killed", "no_server", "bad_argument", "not_found",
              "server_gone", "timeouts"}
    assert {p.stem for p in FIX.glob("*.txt")} == tested
    assert {p.stem for p in FIX.glob("*.source")} == tested


def test_output_without_the_scripts_lines_is_refused():
    text = fixture("normal")
    without = "\n".join(x for x in text.splitlines() if not x.startswith("virtbench-wrk"))
    with pytest.raises(ParseError, match="wrk did not finish"):
        parse_wrk(without)
    no_latency = "\n".join(x for x in text.splitlines()
                           if not x.startswith("virtbench-wrk-latency"))
    with pytest.raises(ParseError, match="no virtbench-wrk-latency line"):
        parse_wrk(no_latency)
    short = text.replace(" counted=43262", "")
    with pytest.raises(ParseError, match="virtbench-wrk-latency line lacks counted"):
        parse_wrk(short)
    fewer = text.replace("counted=43262", "counted=31350")
    with pytest.raises(ParseError, match="holds 31,350 of 31,351 requests"):
        parse_wrk(fewer)


def test_a_run_in_minutes_is_read_as_such():
    text = fixture("normal").replace("Running 3s test", "Running 1m test")
    with pytest.raises(ParseError, match="ran 3.09 s of the 60 s asked"):
        parse_wrk(text)


def test_the_script_defines_done_only():
    """No request() or response(): wrk's hot path is the same as without a script."""
    defined = re.findall(r"^function (\w+)", DONE_LUA, re.M)
    assert defined == ["done"]


# -- parameters --------------------------------------------------------------------------
def test_defaults_and_quick_are_valid_and_host_is_refused_in_one_line():
    assert BENCH.params({})["where"] == "loopback"
    assert BENCH.params({}, quick=True)["seconds"] == 4
    with pytest.raises(VirtbenchError) as err:
        BENCH.params({"where": "host"})
    assert str(err.value) == "where=host is not built yet for nginx; use where=loopback"
    with pytest.raises(VirtbenchError, match=r"where='guest' is not one of loopback, host"):
        BENCH.params({"where": "guest"})


@pytest.mark.parametrize("given, says", [
    ({"seconds": 0}, "seconds=0 is outside 1..3,600"),
    ({"connections": 1001}, "connections=1001 is outside 1..1,000"),
    ({"size": -1}, "size=-1 is outside 0..67,108,864"),
    ({"timeout_s": 0}, "timeout_s=0 is outside 1..60"),
    ({"threads": 8, "connections": 4}, "threads=8 is more than connections=4"),
])
def test_a_bad_parameter_is_one_line_naming_it(given, says):
    with pytest.raises(VirtbenchError) as err:
        BENCH.params(given)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_the_tools_and_packages_are_named():
    assert BENCH.packages == ("nginx-light", "wrk")
    assert PACKAGES["nginx"] == "nginx-light" and PACKAGES["wrk"] == "wrk"


# -- the percentiles a case keeps --------------------------------------------------------
def test_the_defaults_keep_p50_and_p99():
    params = BENCH.params({})
    assert BENCH.floor_requests(params) == 10_000
    support = BENCH.support(params)
    assert list(support.kept) == ["p50_ms", "p99_ms"] and support.left_out is None


def test_quick_keeps_p50_only_and_says_why_once():
    params = BENCH.params({}, quick=True)
    assert BENCH.floor_requests(params) == 200
    support = BENCH.support(params)
    assert list(support.kept) == ["p50_ms"]
    (kind, line), = support.warnings()
    assert kind == "percentile_left_out" and "p99_ms left out" in line


def test_a_small_floor_leaves_every_percentile_out():
    params = BENCH.params({"min_requests": 150})
    assert BENCH.floor_requests(params) == 150
    assert BENCH.support(params).kept == {}


# -- the trial's script ------------------------------------------------------------------
def test_the_conf_is_virtbenchs_own_on_loopback():
    conf = ng.nginx_conf(BENCH.params({"workers": 3}), 23456)
    for line in ("daemon off;", "worker_processes 3;", "pid nginx.pid;", "access_log off;",
                 "listen 127.0.0.1:23456;", "keepalive_requests 1000000;"):
        assert line in conf
    assert "worker_processes auto;" in ng.nginx_conf(BENCH.params({}), 23456)
    assert "/etc/nginx" not in conf and "include" not in conf


def test_the_served_trial_runs_warmup_then_the_measured_wrk_with_the_script():
    params = BENCH.params({"connections": 30, "threads": 3, "warmup": 2, "seconds": 7})
    s = BENCH.served(params, 23456, "abc")
    url = "http://127.0.0.1:23456/abc.bin"
    assert s.client == ["wrk", "-t", "3", "-c", "30", "-d", "7s", "--timeout", "10s",
                        "--latency", "-s", "{work}/done.lua", url]
    assert s.warmup == [["wrk", "-t", "3", "-c", "30", "-d", "2s", "--timeout", "10s",
                         "--latency", url]]
    assert s.ready[-1] == url and s.server[0] == "nginx"
    assert ["truncate", "-s", "4096", "{work}/www/abc.bin"] in s.setup
    assert BENCH.served(BENCH.params({"warmup": 0}), 23456, "abc").warmup == []


def test_the_setup_writes_the_conf_and_script_verbatim(tmp_path):
    """The setup steps' sh commands, run for real: the files hold exactly the text."""
    s = BENCH.served(BENCH.params({}), 23456, "abc")
    for step in s.setup[3:]:
        target = tmp_path / Path(step[-1]).name
        subprocess.run(step[:-1] + [str(target)], check=True)
    assert (tmp_path / "nginx.conf").read_text() == ng.nginx_conf(BENCH.params({}), 23456)
    assert (tmp_path / "done.lua").read_text() == DONE_LUA


def test_each_trial_gets_its_own_port_and_file():
    a, b = (BENCH.argv(BENCH.params({}), None)[2] for _ in range(2))
    port_a = re.search(r"listen 127\.0\.0\.1:(\d+);", a).group(1)
    assert 20000 <= int(port_a) < 60000
    assert a != b


# -- a trial judged against its case -----------------------------------------------------
class OneCommand:
    """An environment whose exec() returns one captured output."""

    def __init__(self, stdout: str):
        self.stdout = stdout

    def exec(self, argv, timeout=None):
        return ExecResult(exit=0, stdout=self.stdout, stderr="", wall_s=5.0)


def test_a_trial_keeps_the_cases_percentiles_and_wrks_omission_estimate():
    params = BENCH.params({"seconds": 3, "connections": 200, "warmup": 0,
                           "min_requests": 1_000})
    out = BENCH.run_trial(OneCommand(fixture("normal")), params)
    assert out.ok, out.error
    assert out.values == {"requests_per_s": 10140.55, "p50_ms": 7.034}
    assert [k for k, _ in out.warnings] == ["percentile_left_out"]
    assert out.detail == {"loop": "closed", "requests": 31351, "corrected": 43262,
                          "omitted_estimate": 11911, "omitted_share": round(11911 / 43262, 6)}


def test_a_trial_with_fewer_requests_than_its_floor_fails():
    params = BENCH.params({"min_requests": 40_000, "warmup": 0})
    out = BENCH.run_trial(OneCommand(fixture("normal")), params)
    assert out.error == ("wrk completed 31,351 requests, fewer than the 40,000 the case's "
                         "percentiles were chosen by")
    assert out.values == {} and out.partial["requests_per_s"] == 10140.55


def test_a_trial_with_http_errors_fails_with_the_parsers_line():
    out = BENCH.run_trial(OneCommand(fixture("not_found")), BENCH.params({}))
    assert out.error.startswith("unparsable output: 30,946 of 30,946 answers were HTTP errors")
