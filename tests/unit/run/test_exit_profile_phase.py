"""--profile exits in the runner: after the measured trials, one profiled trial per
environment x benchmark whose environment can profile; never a measured trial; a failure is
stored with its reason; an environment that cannot profile is said in one line; a resumed
run profiles only what it lacks. (The profilers themselves are tested on their own; here a
native environment stands in for one, with the profile it hands back made in the test.)"""
import io

from rich.console import Console
from runkit import one_study

from virtbench.measure import benchmarks
from virtbench.core.capabilities import can
from virtbench.measure.environments import create
from virtbench.measure.environments.base import EnvSpec
from virtbench.measure.environments.native import Native
from virtbench.core.errors import VirtbenchError
from virtbench.core.outcome import TrialOutcome
from virtbench.foundations.model.profile import FunctionRow, ReasonRow
from virtbench.machinery.exits.exit_profile import ExitProfile
from virtbench.execution.run.runner import Prepared, Runner
from virtbench.foundations.store import Store


def profiling_study(**overrides):
    return one_study(profile="exits", **overrides)


class ProfilingNative(Native):
    """Native, standing for a guest that can profile (label "guest")."""

    def __init__(self, fail_on: str | None = None, workload_fails: dict | None = None):
        super().__init__(EnvSpec("native"))
        self.fail_on, self.calls, self.ended = fail_on, [], 0
        self.workload_fails = dict(workload_fails or {})   # bench -> times its trial fails

    @property
    def label(self) -> str:
        return "guest"

    def capabilities(self):
        return super().capabilities().with_(exit_profile=can("tcg"))

    def profiled_trial(self, bench, params):
        self.calls.append(bench.name)
        if bench.name == self.fail_on:
            raise VirtbenchError("the profiling guest did not boot")
        outcome = bench.run_trial(self, params)
        if self.workload_fails.get(bench.name, 0) > 0:
            self.workload_fails[bench.name] -= 1
            outcome = TrialOutcome(error=f"exit status 1: {bench.name} broke")
        return outcome, ExitProfile(
            "tcg", outcome.wall_s or 0.0, [ReasonRow(reason="pio", count=3, share_pct=100.0)],
            [FunctionRow(address="0x10", function="f+0x0", caller=None, count=3,
                         share_pct=100.0, device="port 0x70")])

    def end_profiling(self):
        self.ended += 1


def profiling_native(fail_on: str | None = None):
    env = ProfilingNative(fail_on)
    return env, env.calls


def cases():
    pi = benchmarks.get("pi")
    stream = benchmarks.get("stream")
    return {"pi": (pi, pi.params({}, quick=True)), "stream": (stream, stream.params({}, quick=True))}


def run(store, envs, study):
    console_out = io.StringIO()
    prepared = Prepared(study, envs, cases(), None)
    out = Runner(store, console=Console(file=console_out, width=200),
                 show_progress=False).start(prepared)
    return out, console_out.getvalue()


def test_profiles_come_after_the_measured_trials_and_are_not_trials(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    env, calls = profiling_native(fail_on="stream")
    plain = create("native")
    plain_label = plain.label
    out, text = run(store, {env.label: env, plain_label: plain}, profiling_study(trials=2))
    assert out.status == "complete" and out.failed == 0 and out.failed_profiles == 1
    assert len(store.trials(out.run_id)) == 2 * 2 * 2          # the measured ones only
    rows = {(p["environment"], p["benchmark"]): p for p in store.profiles(out.run_id)}
    assert set(rows) == {("guest", "pi"), ("guest", "stream")}
    assert rows[("guest", "pi")]["status"] == "ok"
    assert rows[("guest", "pi")]["profile"]["by_function"][0]["device"] == "port 0x70"
    assert rows[("guest", "stream")]["error"] == "the profiling guest did not boot"
    assert env.ended == 1 and calls == ["pi", "stream"]
    assert f"no exit profile for {plain_label}: environment native: exit profiles need" in text
    assert "profile failed guest · stream: the profiling guest did not boot" in text
    kinds = [w["kind"] for w in store.warnings(out.run_id)]
    assert kinds.count("profile_skipped") == 1


def test_a_profiled_trial_whose_workload_failed_runs_once_more(tmp_path):
    """The profiler worked, the workload did not: one more profiled trial, the first failure
    kept in the profile's notes; failing twice stores both failures. A profiler that failed
    (the twin did not boot) is not retried."""
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    env = ProfilingNative(workload_fails={"pi": 1, "stream": 2})
    out, text = run(store, {env.label: env}, profiling_study(trials=1))
    assert env.calls == ["pi", "pi", "stream", "stream"] and out.failed_profiles == 1
    rows = {p["benchmark"]: p for p in store.profiles(out.run_id)}
    assert rows["pi"]["status"] == "ok"
    assert rows["pi"]["profile"]["notes"] == [
        "the first profiled trial failed (exit status 1: pi broke); this profile is the second's"]
    assert rows["stream"]["status"] == "failed"
    assert rows["stream"]["error"] == ("exit status 1: stream broke (and before it: "
                                       "exit status 1: stream broke)")
    assert "profiled trial failed guest · pi: exit status 1: pi broke; once more" in text

    env2 = ProfilingNative(fail_on="pi")
    run(store, {env2.label: env2}, profiling_study(trials=1))
    assert env2.calls == ["pi", "stream"]


def test_without_the_flag_nothing_is_profiled(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    env, calls = profiling_native()
    out, _ = run(store, {env.label: env}, one_study(trials=1))
    assert store.profiles(out.run_id) == [] and calls == []


def test_a_resumed_run_profiles_only_what_it_lacks(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    env, calls = profiling_native(fail_on="stream")
    out, _ = run(store, {env.label: env}, profiling_study(trials=1))
    env2, calls2 = profiling_native()
    prepared = Prepared(profiling_study(trials=1), {env2.label: env2}, cases(), None)
    Runner(store, console=Console(file=io.StringIO()), show_progress=False)._execute(
        out.run_id, prepared)
    assert calls2 == ["stream"]
    assert {p["status"] for p in store.profiles(out.run_id)} == {"ok"}
