"""A fleet worker's runner says its progress per trial, in its log and in the broker (what
`fleet status` reads), from the run's session: the trials a resumed run already stored
count as done, and it keeps no counters of its own."""
from __future__ import annotations

import io

from brokerkit import FakeRedis
from rich.console import Console
from runkit import Quiet, one_study

from virtbench.core.outcome import TrialOutcome
from virtbench.execution.fleet import state
from virtbench.execution.fleet.unit import FleetRunner
from virtbench.execution.run.runner import Prepared
from virtbench.foundations.store import Store
from virtbench.measure.benchmarks.base import Benchmark, Metric


class Ones(Benchmark):
    """Every trial measures 1 s; after `stop_after` calls, Ctrl-C (a killed worker)."""
    name, family = "ones", "test"
    metrics = (Metric("seconds", "s", False),)

    def __init__(self, stop_after: int | None = None):
        self.calls, self.stop_after = 0, stop_after

    def run_trial(self, env, params):
        self.calls += 1
        if self.stop_after is not None and self.calls > self.stop_after:
            raise KeyboardInterrupt
        return TrialOutcome(values={"seconds": 1.0}, exit=0, wall_s=0.01)


def _runner(tmp_path, client):
    log = io.StringIO()
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    return FleetRunner(store, console=Console(file=log, width=200), host="h1",
                       fleet="fleet-1", client=client), log


def _prepared(bench):
    study = one_study(trials=2, cases=[("x", "ones")])
    return Prepared(study, {e: Quiet(e) for e in ("ref", "a")}, {"x": (bench, {})}, "ref")


def test_each_trial_is_a_line_and_the_brokers_count(tmp_path):
    client = FakeRedis()
    runner, log = _runner(tmp_path, client)
    tally = runner.start(_prepared(Ones()))
    lines = [x for x in log.getvalue().splitlines() if x.startswith("h1: ")]
    assert [x.split()[1] for x in lines] == ["1/4", "2/4", "3/4", "4/4"]
    assert all(x.endswith(" ok") for x in lines)
    got = state.get_state(client, "fleet-1", "h1")
    assert (got["done"], got["total"], got["run"]) == (4, 4, tally.run_id)
    assert not {"done", "total"} & set(vars(runner))      # counted by the session alone


def test_a_resumed_run_counts_what_it_stored_before(tmp_path):
    client = FakeRedis()
    runner, log = _runner(tmp_path, client)
    first = runner.start(_prepared(Ones(stop_after=3)))
    assert first.status == "interrupted"
    log.truncate(0), log.seek(0)
    runner._execute(first.run_id, _prepared(Ones()))    # what resume() does, with the fake
    lines = [x for x in log.getvalue().splitlines() if x.startswith("h1: ")]
    assert [x.split()[1] for x in lines] == ["4/4"]
    assert state.get_state(client, "fleet-1", "h1")["done"] == 4
