"""Disturbed trials end to end: a fake guest whose host /proc (the real captured files of
tests/fixtures/proc, their counters advanced by each trial) shows steal or a starved vCPU
thread; the runner samples it through virtbench.machinery.machine.load, marks the trial, keeps it, and an
adaptive run leaves it out and runs another block for its case."""
from __future__ import annotations

import io
import os
import time
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console
from runkit import Quiet, one_study

import virtbench.execution.run.execute as execute
from virtbench.measure.benchmarks.base import Benchmark, Metric
from virtbench.machinery.machine.load import LoadSampler
from virtbench.core.outcome import TrialOutcome
from virtbench.execution.run.runner import Prepared, Runner
from virtbench.foundations.store import Store
from virtbench.execution.run.adaptive import undecided_function

PROC = Path(__file__).resolve().parents[2] / "fixtures" / "proc"
TID = 26790                                    # the vCPU thread of task_vcpu_tcg.txt
TICK = os.sysconf("SC_CLK_TCK")
TRIAL_S = 0.2


class FakeProc:
    """A /proc tree of the real captured files whose counters the fake guest advances."""

    def __init__(self, root: Path):
        self.root = root
        (root / str(TID) / "task" / str(TID)).mkdir(parents=True)
        self.stat = (PROC / "stat_2cpu.txt").read_text()
        self.task = (PROC / "task_vcpu_tcg.txt").read_text()
        self._write()

    def _write(self):
        (self.root / "stat").write_text(self.stat)
        (self.root / str(TID) / "task" / str(TID) / "stat").write_text(self.task)

    def advance(self, user: int, idle: int, steal: int, vcpu: int) -> None:
        """Host ticks of the trial (aggregate cpu line) and the vCPU thread's utime ticks."""
        lines = self.stat.splitlines(keepends=True)
        cpu = lines[0].split()
        for col, add in ((1, user), (4, idle), (8, steal)):
            cpu[col] = str(int(cpu[col]) + add)
        lines[0] = " ".join(cpu) + "\n"
        self.stat = "".join(lines)
        head, _, rest = self.task.rpartition(") ")
        fields = rest.split(" ")
        fields[11] = str(int(fields[11]) + vcpu)          # utime, field 14
        self.task = head + ") " + " ".join(fields)
        self._write()


class Guest(Quiet):
    """A fake guest with one vCPU thread: trial n (per environment, from 1) advances the fake
    /proc as `script` says (steal ticks, vCPU share of the trial's time), else a quiet host
    and a vCPU busy 0.95 of the time."""

    def __init__(self, name, proc: FakeProc, script=None):
        super().__init__(name)
        self.proc, self.script, self.n = proc, dict(script or {}), 0

    def vcpu_threads(self):
        return [TID]

    def run_trial(self, bench, params):
        self.n += 1
        steal, share = self.script.get(self.n, (0, 0.95))
        time.sleep(TRIAL_S)
        self.proc.advance(user=40, idle=2, steal=steal, vcpu=round(share * TRIAL_S * TICK))
        return bench.run_trial(self, params)


class Kernel(Benchmark):
    name, family, cpu_bound = "kernel", "test", True
    metrics = (Metric("seconds", "s", False),)

    def run_trial(self, env, params):
        return TrialOutcome(values={"seconds": 1.0 + 0.001 * env.n}, exit=0, wall_s=TRIAL_S)


@pytest.fixture
def proc(tmp_path, monkeypatch):
    fake = FakeProc(tmp_path / "proc")
    monkeypatch.setattr(execute, "LoadSampler",
                        lambda threads: LoadSampler(threads, proc=str(fake.root)))
    return fake


def _marked(store, run_id):
    return {(t["environment"], t["trial"]): t["detail"]["disturbed"]
            for t in store.trials(run_id) if "disturbed" in (t["detail"] or {})}


def test_steal_read_from_the_host_s_proc_stat_disturbs_the_trial(tmp_path, proc):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    out = io.StringIO()
    guest = Guest("g", proc, {2: (21, 0.95)})           # 21 of 63 ticks stolen: 33 %
    study = replace(one_study(trials=3), steal_limit_pct=10.0)
    prepared = Prepared(study, {"g": guest}, {"kernel": (Kernel(), {})}, None)
    run = Runner(store, console=Console(file=out, width=300), show_progress=False).start(prepared)
    marked = _marked(store, run.run_id)
    assert list(marked) == [("g", 1)]
    assert marked[("g", 1)]["steal_pct"] == pytest.approx(100 * 21 / 63, abs=0.01)
    assert marked[("g", 1)]["reason"].startswith("steal 33.3 % of the host's CPU time, above "
                                                 "the limit of 10 %")
    loads = {t["trial"]: t["detail"]["load"] for t in store.trials(run.run_id)}
    assert loads[0]["steal_pct"] == 0.0 and loads[2]["steal_pct"] == 0.0
    assert len(store.samples(run.run_id)) == 3                     # kept
    assert "disturbed g · kernel #2: steal 33.3 %" in out.getvalue()


def test_a_starved_vcpu_thread_disturbs_the_trial(tmp_path, proc):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    guest = Guest("g", proc, {6: (0, 0.25)})
    prepared = Prepared(one_study(trials=7), {"g": guest}, {"kernel": (Kernel(), {})}, None)
    run = Runner(store, console=Console(file=io.StringIO()), show_progress=False).start(prepared)
    marked = _marked(store, run.run_id)
    assert list(marked) == [("g", 5)]
    # the vCPU thread's ticks over the trial's wall time (a little over TRIAL_S)
    assert 0.15 < marked[("g", 5)]["cpu_share"] < 0.26
    assert 0.7 < marked[("g", 5)]["usual_cpu_share"] <= 0.96
    shares = [t["detail"]["load"]["cpu_share"] for t in store.trials(run.run_id)]
    assert all(s > 0.6 for i, s in enumerate(shares) if i != 5)
    assert all(t["detail"]["load"]["threads_cpu_s"] > 0 for t in store.trials(run.run_id))


def adaptive_study():
    """trials = "auto" (6..12) against "ref", steal judged on the fake /proc."""
    return one_study(trials=6, adaptive=True, min_trials=6, max_trials=12, baseline="ref",
                     steal_limit_pct=10.0)


def _adaptive_run(tmp_path, proc, script):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    envs = {"ref": Guest("ref", proc), "g": Guest("g", proc, script)}
    prepared = Prepared(adaptive_study(), envs, {"kernel": (Kernel(), {})}, "ref")
    out = io.StringIO()
    run = Runner(store, console=Console(file=out, width=400), show_progress=False).start(prepared)
    return store, run, out.getvalue()


def test_an_adaptive_run_runs_another_block_for_a_case_with_a_disturbed_trial(tmp_path, proc):
    store, run, text = _adaptive_run(tmp_path, proc, {3: (30, 0.95)})
    assert list(_marked(store, run.run_id)) == [("g", 2)]
    detail = store.get_run(run.run_id)["detail"]["adaptive"]
    assert detail["stopped"] == "all decided"
    assert detail["blocks"] == {"ref": {"kernel": 7}, "g": {"kernel": 7}}
    assert "block 7: still undecided: g · kernel (seconds vs ref: 5 of at least 6 blocks)" in text
    assert undecided_function(6)(store, run.run_id) == {}


def test_without_a_disturbed_trial_the_same_run_stops_at_its_minimum(tmp_path, proc):
    store, run, text = _adaptive_run(tmp_path, proc, {})
    assert _marked(store, run.run_id) == {}
    assert store.get_run(run.run_id)["detail"]["adaptive"]["blocks"] == \
        {"ref": {"kernel": 6}, "g": {"kernel": 6}}
    assert "still undecided" not in text
