"""Disturbed trials: the limits (pure), and the runner marking, keeping and saying them."""
from __future__ import annotations

import io

import pytest
from rich.console import Console
from runkit import Quiet, one_study

from virtbench.measure.benchmarks.base import Benchmark, Metric
from virtbench.execution.run.disturbance import Limits, cpu_share, judge, usual_share
from virtbench.machinery.machine.load import Load
from virtbench.core.outcome import TrialOutcome
from virtbench.execution.run.runner import Prepared, Runner
from virtbench.foundations.store import Store
from virtbench.study.design import Study


def test_steal_over_its_limit_disturbs_any_trial():
    d = judge(Load(1.0, steal_pct=12.5), None, None, cpu_bound=False, limits=Limits())
    assert "steal 12.5 % of the host's CPU time, above the limit of 10 %" in d["reason"]
    assert d["steal_pct"] == 12.5 and d["limits"] == {"steal_pct": 10.0, "cpu_share": 0.7}
    assert judge(Load(1.0, steal_pct=9.9), None, None, False, Limits()) is None


def test_a_cpu_share_far_below_the_usual_disturbs_a_cpu_bound_trial_only():
    load = Load(1.0, steal_pct=0.0)
    d = judge(load, 0.25, 0.40, cpu_bound=True, limits=Limits())
    assert "got 0.25 of their CPUs' time, less than 0.7 x the 0.40" in d["reason"]
    assert d["cpu_share"] == 0.25 and d["usual_cpu_share"] == 0.4
    assert judge(load, 0.30, 0.40, True, Limits()) is None          # 0.75 of usual: ordinary
    assert judge(load, 0.25, 0.40, False, Limits()) is None         # not CPU-bound: not judged
    assert judge(load, 0.25, None, True, Limits()) is None          # no usual share yet
    assert judge(load, 0.25, 0.40, True, Limits(cpu_share=0)) is None   # off


def test_the_usual_share_is_the_median_once_there_are_enough():
    assert usual_share([0.9, 0.4], Limits()) is None
    assert usual_share([0.9, 0.4, 0.5], Limits()) == 0.5


def test_cpu_share_is_the_vcpu_threads_when_measured_else_the_command_s():
    assert cpu_share(Load(2.0, threads_cpu_s=1.0), 9.9, 9.9, 1) == 0.5
    assert cpu_share(Load(2.0), 0.9, 1.0, 1) == 0.9
    assert cpu_share(Load(2.0), 1.8, 1.0, 2) == 0.9              # two busy processes
    assert cpu_share(Load(2.0), None, 1.0, 1) is None


def test_limits_come_from_the_study():
    assert Limits.of(one_study(steal_limit_pct=5.0, cpu_share_limit=0.5)) == Limits(5.0, 0.5)
    assert Limits.of(Study(name="s", environments=[], benchmarks=[])) == Limits()


class Busy(Benchmark):
    """A CPU-bound benchmark whose n-th trial per environment reports the CPU time given."""
    name, family, cpu_bound = "busy", "test", True
    metrics = (Metric("seconds", "s", False),)

    def __init__(self, shares):
        self.shares, self.calls = shares, {}

    def run_trial(self, env, params):
        n = self.calls[env.label] = self.calls.get(env.label, 0) + 1
        share = self.shares.get((env.label, n), 0.95)
        return TrialOutcome(values={"seconds": 1.0}, exit=0, wall_s=1.0, cpu_s=share)


def test_the_runner_marks_a_disturbed_trial_keeps_it_and_says_so(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    out = io.StringIO()
    bench = Busy({("a", 5): 0.3})
    prepared = Prepared(one_study(trials=6), {"a": Quiet("a")}, {"busy": (bench, {})}, None)
    run = Runner(store, console=Console(file=out, width=300), show_progress=False).start(prepared)
    trials = store.trials(run.run_id)
    assert len(trials) == 6 and all(t["status"] == "ok" for t in trials)
    marked = [t for t in trials if "disturbed" in t["detail"]]
    assert [t["trial"] for t in marked] == [4]
    assert marked[0]["detail"]["disturbed"]["cpu_share"] == 0.3
    assert marked[0]["detail"]["disturbed"]["usual_cpu_share"] == 0.95
    assert all(t["detail"]["load"]["cpu_share"] > 0 for t in trials)
    assert len(store.samples(run.run_id)) == 6          # kept: the analysis leaves it out
    assert "disturbed a · busy #5: the measured threads got 0.30" in out.getvalue()


def test_the_first_trials_of_a_case_are_not_judged_by_cpu_share(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    bench = Busy({("a", 1): 0.1})
    prepared = Prepared(one_study(trials=4), {"a": Quiet("a")}, {"busy": (bench, {})}, None)
    run = Runner(store, console=Console(file=io.StringIO()), show_progress=False).start(prepared)
    assert not [t for t in store.trials(run.run_id) if "disturbed" in t["detail"]]
