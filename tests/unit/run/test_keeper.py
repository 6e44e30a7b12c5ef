"""Environments' lives during a run, with fake environments: loss and restart, the restart
cap, pause/resume errors, warm-ups, --retry-failed, pinning, escaped labels."""
from __future__ import annotations

import functools
import io

import pytest
from rich.console import Console
from runkit import one_study

from virtbench.execution.run import keeper
from virtbench.machinery.host import pinning
from virtbench.measure.benchmarks.base import Benchmark, Metric, TrialOutcome
from virtbench.core.capabilities import Capabilities, can
from virtbench.measure.environments.base import Environment, EnvSpec
from virtbench.measure.environments.group import InstanceGroup
from virtbench.core.errors import AgentError
from virtbench.execution.run.runner import Prepared, Runner
from virtbench.foundations.store import Store
from virtbench.study.design import Study


FakeStudy = functools.partial(one_study, seed=7, name="fake")


class FakeEnv(Environment):
    """An environment whose trials, pause and resume do what the test says."""

    kind = "fake"

    def __init__(self, name: str, log: list, die_on: set[int] = frozenset(),
                 pause_error: bool = False, resume_error: bool = False,
                 pausable: bool = True):
        super().__init__(EnvSpec("fake"))
        self.pausable = pausable
        self.name, self.log = name, log
        self.die_on = set(die_on)          # call numbers (1-based, all trials) that kill it
        self.pause_error, self.resume_error = pause_error, resume_error
        self.alive = False
        self.calls = 0
        self.threads = [1001]

    @property
    def label(self):
        return self.name

    def start(self):
        self.log.append(("start", self.name))
        self.alive = True

    def stop(self):
        self.log.append(("stop", self.name))
        self.alive = False

    def capabilities(self):
        caps = Capabilities.none("fake")
        return caps.with_(pause=can("fake pause")) if self.pausable else caps

    def pause(self):
        self.log.append(("pause", self.name))
        if self.pause_error:
            raise AgentError("QMP stop: connection reset")

    def resume(self):
        self.log.append(("resume", self.name))
        if self.resume_error:
            raise OSError("QMP cont: broken pipe")

    def is_alive(self):
        return self.alive

    def lost_reason(self):
        return "QEMU was killed (signal 9)"

    def pin_threads(self, bench, params):
        return [(t, 1) for t in self.threads]

    def kernel_path(self, name):
        return name

    def metadata(self):
        return {"kernel": "fake"}


class Count(Benchmark):
    name = "count"
    family = "test"
    metrics = (Metric("v", "x", True),)

    def run_trial(self, env, params):
        env.calls += 1
        env.log.append(("trial", env.name, env.calls))
        if env.calls in env.die_on:
            env.alive = False                    # QEMU killed mid-trial
            raise AgentError(f"{env.name}: connection lost")
        return TrialOutcome(values={"v": float(env.calls)})


def _run(store, envs, study, console=None):
    prepared = Prepared(study, {e.label: e for e in envs}, {"count": (Count(), {})}, None)
    runner = Runner(store, console=console or Console(file=io.StringIO()), show_progress=False)
    return runner.start(prepared)


def test_a_guest_lost_mid_trial_fails_that_trial_restarts_and_the_run_goes_on(store_url):
    store = Store(store_url)
    log: list = []
    env = FakeEnv("guest", log, die_on={2})
    out = _run(store, [env], FakeStudy(trials=4))
    assert out.status == "complete" and out.failed == 1
    trials = store.trials(out.run_id)
    assert [t["status"] for t in trials] == ["ok", "failed", "ok", "ok"]
    assert trials[1]["error"].startswith("environment lost: QEMU was killed")
    assert [t["boot"] for t in trials] == [1, 1, 2, 2]
    boots = store.boots(out.run_id)
    assert [(b["boot"], b["reason"].split(":")[0], b["lost"]) for b in boots] == [
        (1, "first start", "QEMU was killed (signal 9)"), (2, "restart after", None)]
    assert [tr for _, tr in boots[1]["trials"]] == [2, 3]
    assert log.count(("start", "guest")) == 2
    assert any(w["kind"] == "environment_lost" for w in store.warnings(out.run_id))


class Stepped(FakeEnv):
    """A fake that keeps the base's life cycle (its steps, not its own start and stop)."""

    start = Environment.start
    stop = Environment.stop

    def launch(self):
        self.log.append(("start", self.name))
        self.alive = True
        self.resources.add("the fake process", lambda: setattr(self, "alive", False))


def test_each_boots_step_times_are_stored_with_the_environment(store_url):
    store = Store(store_url)
    env = Stepped("guest", [], die_on={2})
    out = _run(store, [env], FakeStudy(trials=3))
    meta = store.environments(out.run_id)[0]["metadata"]
    # the last boot's steps (a restart after the loss at trial 2), and its stop at the end
    assert set(meta["lifecycle"]) == {"prepare_s", "start_s", "ready_s", "stop_s"}
    assert all(v >= 0 for v in meta["lifecycle"].values())
    assert meta["kernel"] == "fake" and not env.alive


def test_after_max_restarts_the_environment_gives_up_and_the_others_go_on(store_url):
    store = Store(store_url)
    log: list = []
    bad = FakeEnv("bad", log, die_on=set(range(1, 100)))
    good = FakeEnv("good", log)
    out = _run(store, [bad, good], FakeStudy(trials=6))
    assert out.status == "complete"
    trials = store.trials(out.run_id)
    bad_trials = [t for t in trials if t["environment"] == "bad"]
    assert [t["status"] for t in trials if t["environment"] == "good"] == ["ok"] * 6
    assert all(t["status"] == "failed" for t in bad_trials)
    assert log.count(("start", "bad")) == keeper.MAX_RESTARTS + 1
    gave_up = [t for t in bad_trials if "gave up" in (t["error"] or "")]
    assert len(gave_up) == 6 - (keeper.MAX_RESTARTS + 1)
    assert "after 2 restarts" in gave_up[0]["error"]


@pytest.mark.parametrize("error, words", [
    ({"pause_error": True}, "pausing a failed: QMP stop"),
    ({"resume_error": True}, "resuming a failed"),
])
def test_a_pause_or_resume_error_fails_that_environment_not_the_run(store_url, error, words):
    store = Store(store_url)
    log: list = []
    a = FakeEnv("a", log, **error)
    b = FakeEnv("b", log)
    out = _run(store, [a, b], FakeStudy(trials=3))
    assert out.status == "complete"
    trials = store.trials(out.run_id)
    assert [t["status"] for t in trials if t["environment"] == "b"] == ["ok"] * 3
    failed = [t for t in trials if t["status"] == "failed"]
    assert failed and all(t["environment"] == "a" and words in t["error"] for t in failed)
    if "pause_error" in error:
        assert ("stop", "a") in log


def test_an_environment_that_cannot_pause_is_never_paused(store_url):
    # an ssh target or native keeps running while others measure: its caps say so, and a
    # pause() it does not support is never asked of it (here it would fail the environment)
    store = Store(store_url)
    log: list = []
    a = FakeEnv("a", log, pause_error=True, pausable=False)
    b = FakeEnv("b", log)
    out = _run(store, [a, b], FakeStudy(trials=3))
    assert all(t["status"] == "ok" for t in store.trials(out.run_id))
    assert ("pause", "a") not in log and ("pause", "b") in log


def test_warmups_run_first_per_environment_and_benchmark_and_stay_out(store_url):
    store = Store(store_url)
    log: list = []
    a, b = FakeEnv("a", log), FakeEnv("b", log)
    out = _run(store, [a, b], FakeStudy(trials=3, warmup=2))
    every = store.trials(out.run_id, include_warmup=True)
    for label in ("a", "b"):
        mine = [t for t in every if t["environment"] == label]
        assert [t["trial"] for t in mine[:2]] == [-1, -2]       # before any measured trial
        assert [t["warmup"] for t in mine] == [True, True, False, False, False]
    # measured samples are the 3rd..5th calls of each environment: warm-ups never counted
    assert sorted(s["value"] for s in store.samples(out.run_id)) == [3.0, 3.0, 4.0, 4.0, 5.0, 5.0]
    assert [t["trial"] for t in store.trials(out.run_id)].count(-1) == 0


def test_retry_failed_reruns_failed_trials_and_keeps_the_old_rows(store_url, monkeypatch):
    store = Store(store_url)
    log: list = []
    env = FakeEnv("guest", log, die_on={2})
    study = FakeStudy(trials=3)
    out = _run(store, [env], study)
    assert out.failed == 1
    prepared = Prepared(study, {"guest": env}, {"count": (Count(), {})}, None)
    monkeypatch.setattr("virtbench.execution.run.runner.prepare", lambda s: prepared)
    monkeypatch.setattr("virtbench.study.design.Study.from_dict", lambda d, run_id=None: study)
    runner = Runner(store, console=Console(file=io.StringIO()), show_progress=False)
    plain = runner.resume(out.run_id)                  # missing slots only: nothing to do
    assert plain.done == 0
    again = runner.resume(out.run_id, retry_failed=True)
    assert again.done == 1 and again.failed == 0
    assert [t["status"] for t in store.trials(out.run_id)] == ["ok", "ok", "ok"]
    old = store.superseded_trials(out.run_id)
    assert len(old) == 1 and old[0]["error"].startswith("environment lost")


def test_pinning_records_cpus_and_warns_once_when_the_host_is_too_small(store_url, monkeypatch):
    pinned: list = []
    monkeypatch.setattr(pinning, "_set", lambda tid, cpus: pinned.append((tid, list(cpus))))
    store = Store(store_url)
    log: list = []
    small = FakeEnv("small", log)
    big = FakeEnv("big", log)
    big.threads = [2001, 2002, 2003]
    prepared = Prepared(FakeStudy(trials=2, pin="auto"), {"small": small, "big": big},
                        {"count": (Count(), {})}, None)
    runner = Runner(store, console=Console(file=io.StringIO()), show_progress=False)
    monkeypatch.setattr(pinning, "host_cpus", lambda: [0, 1, 2])
    out = runner.start(prepared)
    envs = {e["label"]: e for e in store.environments(out.run_id)}
    assert envs["small"]["metadata"]["pinning"]["benchmarks"]["count"] == [[1]]
    assert envs["big"]["metadata"]["pinning"]["benchmarks"]["count"] == [[0], [1], [2]]
    assert (1001, [1]) in pinned and (2003, [2]) in pinned
    big.threads = [1, 2, 3, 4]
    out = runner.start(prepared)
    warns = [w for w in store.warnings(out.run_id) if w["kind"] == "not_pinned"]
    assert len(warns) == 1 and warns[0]["environment"] == "big"
    meta = {e["label"]: e["metadata"] for e in store.environments(out.run_id)}
    assert meta["big"]["pinning"]["benchmarks"]["count"].startswith("unpinned: needs 4")


def test_pin_off_touches_nothing(store_url, monkeypatch):
    monkeypatch.setattr(pinning, "_set", lambda *a: (_ for _ in ()).throw(AssertionError("pinned")))
    out = _run(Store(store_url), [FakeEnv("a", [])], FakeStudy(trials=1, pin="off"))
    assert out.failed == 0


def test_assign_leaves_the_first_cpu_when_it_can():
    assert pinning.assign([0, 1], [1]) == [[1]]
    assert pinning.assign([0, 1], [1, 1]) == [[0], [1]]
    assert pinning.assign([0, 1, 2, 3], [2, 1]) == [[1, 2], [3]]
    assert pinning.assign([0, 1], [3]) is None


def test_vcpu_threads_from_real_qmp_output(fixture_text):
    import json
    reply = json.loads(fixture_text("qemu", "query-cpus-fast-7.2-tcg-smp2.json"))["return"]
    assert pinning.vcpu_threads(list(reversed(reply))) == [20343, 20344]


def test_a_group_passes_liveness_and_pin_threads_through():
    a, b = FakeEnv("m", []), FakeEnv("m", [])
    b.threads = [1002]
    group = InstanceGroup.__new__(InstanceGroup)
    group.members = [a, b]
    a.alive, b.alive = True, False
    assert not group.is_alive()
    assert group.lost_reason() == "instance 1: QEMU was killed (signal 9)"
    assert group.pin_threads(Count(), {}) == [(1001, 1), (1002, 1)]


def test_labels_with_brackets_print_as_written(store_url):
    buf = io.StringIO()
    env = FakeEnv("pi[k=17]", [], die_on={1})
    _run(Store(store_url), [env], FakeStudy(trials=1), console=Console(file=buf, width=200))
    text = buf.getvalue()
    assert "starting pi[k=17] ..." in text and "lost pi[k=17]" in text


def test_with_warmups_numbers_and_orders_them():
    from virtbench.execution.run import warmup
    from virtbench.study.design import plan
    slots = warmup.with_warmups(plan(["a", "b"], ["x"], 2, seed=1), 2)
    warm = [s for s in slots if s.trial < 0]
    assert [s.seq for s in warm] == [-4, -3, -2, -1]
    assert [s.trial for s in warm] == [-1, -2, -1, -2]
    for env in ("a", "b"):
        mine = [s.trial for s in slots if s.environment == env]
        assert mine == [-1, -2, 0, 1]
    assert warmup.count(FakeStudy(warmup=0)) == 0
    assert warmup.count(Study(name="s", environments=[], benchmarks=[])) == 1   # the default
    assert warmup.planned_trials(FakeStudy(trials=3, warmup=1), 2, 2) == 16


def test_a_lost_agent_waits_for_the_environment_to_show_why(store_url):
    store = Store(store_url)
    run_id = store.create_run({"name": "t"}, seed=1, quick=True, version="0", host="h")
    env = FakeEnv("guest", [])
    answers = iter([True, True, False])
    env.is_alive = lambda: next(answers, False)        # QEMU's exit is seen a moment late
    life = keeper.Keeper({"guest": env}, store, run_id, Console(file=io.StringIO()),
                               pin="off")
    error = life.after(env, "agent lost: guest: connection closed")
    assert error == "environment lost: QEMU was killed (signal 9)"
    up = FakeEnv("up", [])
    up.alive = True
    assert life.after(up, "exit status 1: boom") == "exit status 1: boom"


def test_a_group_passes_vcpu_threads_through():
    a, b = FakeEnv("m", []), FakeEnv("m", [])
    a.vcpu_threads, b.vcpu_threads = (lambda: [11, 12]), (lambda: [13])
    group = InstanceGroup.__new__(InstanceGroup)
    group.members = [a, b]
    assert group.vcpu_threads() == [11, 12, 13]


def test_native_pins_our_kernels_with_their_process_count_and_frees_other_tools():
    import os
    from virtbench.measure import benchmarks, environments
    from virtbench.machinery.kernels import build as kernels
    env = environments.create("native")
    with env:
        pid = env.agent.proc.pid
        stream = benchmarks.get("stream")
        assert env.pin_threads(stream, {"processes": 2}) == [(pid, 2)]
        assert env.pin_threads(benchmarks.get("pi"), {}) == [(pid, 1)]
        other = next(b for b in benchmarks.REGISTRY.values()
                     if not set(b.tools) & set(kernels.KERNELS))
        assert env.pin_threads(other, {}) == [(pid, 0)]
        cpus = sorted(os.sched_getaffinity(0))
        sets, why = pinning.apply(env.pin_threads(benchmarks.get("pi"), {}), cpus)
        assert sets is not None and os.sched_getaffinity(pid) == set(sets[0])
        pinning.apply(env.pin_threads(other, {}), cpus)
        assert os.sched_getaffinity(pid) == set(cpus)


def test_the_dry_run_estimate_counts_warmups():
    from virtbench.execution.run.runner import estimate_s
    cases = {"count": (Count(), {"target_seconds": 8})}
    one = Prepared(FakeStudy(trials=3, warmup=0), {"a": FakeEnv("a", [])}, cases, None)
    two = Prepared(FakeStudy(trials=3, warmup=1), {"a": FakeEnv("a", [])}, cases, None)
    assert estimate_s(two) == estimate_s(one) * 4 / 3
