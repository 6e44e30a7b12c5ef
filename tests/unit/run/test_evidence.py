"""A failed trial keeps its evidence: what it measured before it failed (as samples of the
failed trial, never in the statistics), its exit status and the tail of its output."""
from __future__ import annotations

import os
import signal
import threading

import pytest
from runkit import Flaky, Quiet, run_study

from virtbench.results.analysis import analyze_run
from virtbench.measure.benchmarks import REGISTRY
from virtbench.measure.benchmarks.base import Benchmark, Metric, ParseError
from virtbench.foundations.store import OUTPUT_TAIL_BYTES, Store, output_tail
from virtbench.machinery.agent.transport import ExecResult


# -- parsers that got some of it --------------------------------------------------------------
def test_a_kernel_whose_check_failed_still_gives_what_it_measured(fixture_text):
    # real output of the pi and himeno kernels with a corrupted digit / grid point (exit 3)
    with pytest.raises(ParseError) as pi:
        REGISTRY["pi"].parse(fixture_text("kernels", "pi-corrupt.stdout"))
    assert set(pi.value.partial) == {"seconds"} and pi.value.partial["seconds"] > 0
    with pytest.raises(ParseError) as himeno:
        REGISTRY["himeno"].parse(fixture_text("kernels", "himeno-xs-corrupt.stdout"))
    assert himeno.value.partial["mflops"] > 0


def test_a_failed_command_keeps_the_figures_its_output_holds(fixture_text):
    text = fixture_text("kernels", "pi-corrupt.stdout")
    out = REGISTRY["pi"].outcome_of(ExecResult(exit=3, stdout=text, stderr="pi: VERIFICATION "
                                               "FAILED\n", wall_s=1.0), 60)
    assert not out.ok and out.error.startswith("exit status 3")
    assert out.values == {} and out.partial["seconds"] > 0
    assert out.measured() == out.partial
    # a command killed before it printed anything measured nothing
    none = REGISTRY["pi"].outcome_of(ExecResult(exit=137, stdout="", stderr="", wall_s=1.0,
                                                timed_out=True), 60)
    assert none.error == "timed out after 60 s" and none.partial == {}


def test_stream_validation_failure_keeps_the_rates_as_evidence(run_stream):
    run = run_stream("-n", "100000", "-p", "3", "--corrupt-element", "5")
    assert run.returncode == 3
    out = REGISTRY["stream"].outcome_of(ExecResult(exit=run.returncode, stdout=run.stdout,
                                                   stderr=run.stderr, wall_s=1.0), 60)
    assert not out.ok
    assert set(out.partial) == {"copy_mb_s", "scale_mb_s", "add_mb_s", "triad_mb_s"}
    assert all(v > 0 for v in out.partial.values())


@pytest.fixture
def run_stream():
    import subprocess

    from virtbench.machinery.kernels import build as kernels
    binary = kernels.build() / "stream"

    def run(*args):
        return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=120)
    return run


# -- the output tail --------------------------------------------------------------------------
def test_output_tail_keeps_the_last_bytes_and_says_how_many_there_were():
    assert output_tail("short") == ("short", None)
    text = "é" * 10 + "abc"                              # 23 bytes in UTF-8
    tail, size = output_tail(text, limit=4)
    assert (tail, size) == ("abc", 23)                    # a character cut in two is dropped
    tail, size = output_tail("0123456789", limit=4)
    assert (tail, size) == ("6789", 10)


# -- the runner keeps it ----------------------------------------------------------------------
def test_a_failed_trial_is_stored_with_its_partial_values_exit_and_output_tail(store_url):
    store = Store(store_url)
    bench = Flaky(fail_on={2}, partial={"rate": 0.5}, noise=OUTPUT_TAIL_BYTES + 1000)
    out = run_study(store, [Quiet("a")], {"flaky": bench}, trials=4)
    assert out.failed == 1
    trials = store.trials(out.run_id)
    failed = [t for t in trials if t["status"] == "failed"]
    assert len(failed) == 1
    t = failed[0]
    assert t["exit"] == 3 and "verification failed" in t["error"]
    assert len(t["stdout"].encode()) == OUTPUT_TAIL_BYTES
    assert t["stdout"].endswith("measured before the failure\n")
    assert t["stderr"].endswith("verification failed\n")
    assert t["detail"]["stdout_bytes"] == OUTPUT_TAIL_BYTES + 1000 + 29
    assert t["detail"]["stderr_bytes"] > OUTPUT_TAIL_BYTES
    evidence = [s for s in store.samples(out.run_id, include_failed=True)
                if s["status"] == "failed"]
    assert [(s["metric"], s["value"]) for s in evidence] == [("rate", 0.5)]
    # a successful trial keeps its whole output: no size of a cut one in its detail (which
    # says how it was measured: its repetitions and the host's load)
    ok = [t for t in trials if t["status"] == "ok"]
    assert ok[0]["stdout"] == "1\n"
    assert not {"stdout_bytes", "stderr_bytes"} & set(ok[0]["detail"])
    assert ok[0]["detail"]["repetitions"] == 1 and "load" in ok[0]["detail"]


def test_evidence_never_enters_the_statistics(store_url):
    store = Store(store_url)
    # the failed trial measured a wild rate before failing: it must not move the figures
    out = run_study(store, [Quiet("a")], {"flaky": Flaky(fail_on={2}, partial={"rate": 1e9})},
                    trials=4)
    assert [s["value"] for s in store.samples(out.run_id) if s["metric"] == "rate"] == \
        [1.0, 3.0, 4.0]
    result = analyze_run(store, out.run_id)
    rate = next(r for r in result["results"] if r["metric"] == "rate")
    assert rate["samples"] == [1.0, 3.0, 4.0] and rate["n"] == 3
    assert max(rate["samples"]) < 1e9 and rate["trials"] == [1, 3, 4]


def test_retrying_a_failed_trial_keeps_its_evidence_with_the_superseded_row(store_url):
    store = Store(store_url)
    out = run_study(store, [Quiet("a")], {"flaky": Flaky(fail_on={1}, partial={"rate": 0.25})},
                    trials=2)
    assert store.supersede_failed(out.run_id) == 1
    old = store.superseded_trials(out.run_id)
    assert old[0]["detail"]["samples"] == [{"metric": "rate", "value": 0.25, "unit": "MB/s",
                                            "higher_is_better": True}]
    assert old[0]["exit"] == 3


# -- an agent lost mid-trial ------------------------------------------------------------------
class _SaysThenHangs(Benchmark):
    """Prints its figure at once; in call `kill_at` it then waits, and its agent is killed."""

    name = "says"
    family = "test"
    metrics = (Metric("v", "x", True),)

    def __init__(self, kill_at: int = 2):
        self.kill_at, self.calls = kill_at, 0

    def argv(self, params, env):
        self.calls += 1
        if self.calls == self.kill_at:
            threading.Timer(2.0, lambda: os.kill(env.agent.proc.pid, signal.SIGKILL)).start()
            return ["sh", "-c", "echo 'v 7.5'; echo 'going on' >&2; sleep 30"]
        return ["echo", "v 1.0"]

    def timeout(self, params):
        return 60.0

    def parse(self, stdout):
        return {"v": float(stdout.split()[1])}


def test_an_agent_lost_mid_trial_leaves_the_output_that_arrived_and_its_figures(store_url,
                                                                              tmp_path):
    from virtbench.measure.environments import create
    env = create(f"native:scratch={tmp_path}")
    store = Store(store_url)
    out = run_study(store, [env], {"says": _SaysThenHangs()}, trials=3)
    trials = store.trials(out.run_id)
    assert [t["status"] for t in trials] == ["ok", "failed", "ok"]
    lost = trials[1]
    assert lost["error"].startswith("environment lost") and lost["exit"] is None
    assert lost["stdout"] == "v 7.5\n" and lost["stderr"] == "going on\n"
    evidence = [(s["metric"], s["value"]) for s in store.samples(out.run_id, include_failed=True)
                if s["status"] == "failed"]
    assert evidence == [("v", 7.5)]
    assert [s["value"] for s in store.samples(out.run_id)] == [1.0, 1.0]
