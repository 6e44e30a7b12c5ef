"""One delivery of a unit (fleet/unit.py), with the broker in memory and the Runner faked:
what run_unit decides from the host's run row (start, resume, or only acknowledge), the
unit's state it leaves, its lease always released; and what the task does with a unit that
reached the wrong worker, a store that went away, and Ctrl-C."""
from __future__ import annotations

import signal
from types import SimpleNamespace

import pytest
from rich.console import Console

from brokerkit import FakeRedis
from virtbench.core.errors import VirtbenchError
from virtbench.execution.fleet import app as fleet_app, state, unit
from virtbench.foundations.store import StoreUnavailable
from virtbench.study.flags import StudyFlags, with_flags

STUDY = with_flags(None, StudyFlags(env=["native"], bench=["pi:k=10"], trials=2, seed=3)).to_dict()


class FakeStore:
    def __init__(self, runs=()):
        self.runs = list(runs)

    def get_fleet(self, fleet_id):
        return {"id": fleet_id, "study_name": "s", "study": STUDY, "hosts": ["a", "b"]}

    def fleet_runs(self, fleet_id):
        return self.runs


class FakeRunner:
    calls: list = []
    outcome = SimpleNamespace(run_id="r-new", status="complete", failed=0)
    error: Exception | None = None

    def __init__(self, store, console, host, fleet, client):
        self.host, self.fleet = host, fleet

    def _finish(self, what, arg):
        FakeRunner.calls.append((what, arg))
        if FakeRunner.error is not None:
            raise FakeRunner.error
        return FakeRunner.outcome

    def start(self, prepared):
        return self._finish("start", prepared)

    def resume(self, run_id):
        return self._finish("resume", run_id)


@pytest.fixture
def deliver(monkeypatch, tmp_path):
    """run_unit on fleet f1, host a, against `store` (a FakeStore); (what it returned, the
    unit's state, the log)."""
    FakeRunner.calls, FakeRunner.error = [], None
    FakeRunner.outcome = SimpleNamespace(run_id="r-new", status="complete", failed=0)
    monkeypatch.setattr(unit, "FleetRunner", FakeRunner)
    monkeypatch.setattr(unit, "prepare", lambda study: ("prepared", study.name))   # no probes
    client = FakeRedis()
    log = tmp_path / "log.txt"

    def run(store):
        monkeypatch.setattr(unit, "Store", lambda url: store() if callable(store) else store)
        with log.open("w") as fh:
            got = unit.run_unit(client, "sqlite:///x.db", "f1", "a", Console(file=fh, width=300))
        assert client.get("virtbench:lease:f1:a") is None          # released, whatever happened
        return got, state.get_state(client, "f1", "a"), log.read_text()
    return run


def test_a_first_delivery_starts_the_study_and_ends_complete(deliver):
    got, st, log = deliver(FakeStore())
    assert got == "complete" and FakeRunner.calls == [("start", ("prepared", STUDY["name"]))]
    assert st["state"] == "complete" and st["run"] == "r-new" and st["failed_trials"] == 0
    assert "starting study s" in log and "run r-new complete" in log   # the fleet row's name


def test_failed_trials_end_the_unit_complete_with_failures(deliver):
    FakeRunner.outcome = SimpleNamespace(run_id="r-new", status="complete", failed=2)
    got, st, log = deliver(FakeStore())
    assert got == "complete-with-failures" and st["failed_trials"] == 2
    assert "2 trial(s) failed" in log


def test_a_second_delivery_resumes_the_hosts_run_and_a_complete_one_runs_nothing(deliver):
    got, _, log = deliver(FakeStore([{"id": "r1", "host": "b", "status": "running"},
                                     {"id": "r2", "host": "a", "status": "running"}]))
    assert got == "complete" and FakeRunner.calls == [("resume", "r2")]
    assert "delivered again: resuming run r2" in log
    FakeRunner.calls = []
    got, st, log = deliver(FakeStore([{"id": "r2", "host": "a", "status": "complete"}]))
    assert got == "complete" and FakeRunner.calls == [] and st["run"] == "r2"
    assert "nothing to do" in log


def test_a_host_that_cannot_run_the_study_fails_its_unit_with_why(deliver):
    FakeRunner.error = VirtbenchError("environment native: not usable here: no such thing")
    got, st, log = deliver(FakeStore())
    assert got == "failed" and st["state"] == "failed"
    assert st["error"] == "environment native: not usable here: no such thing"
    assert "unit f1 failed: environment native" in log


@pytest.mark.parametrize("away", ["at open", "mid-run"])
def test_a_store_away_hands_the_unit_back_to_try_again(deliver, away):
    if away == "at open":
        def store():
            raise VirtbenchError("store sqlite:///x.db: unreachable")
    else:
        store = FakeStore()
        FakeRunner.error = StoreUnavailable("sqlite:///x.db", "locked", "a trial")
    with pytest.raises(unit.StoreAway, match="unreachable|went away"):
        deliver(store)


def test_an_interrupted_run_is_raised_again_for_the_task(deliver):
    FakeRunner.outcome = SimpleNamespace(run_id="r-new", status="interrupted", failed=0)
    with pytest.raises(KeyboardInterrupt):
        deliver(FakeStore())


# -- the task ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def celery_app():
    """One app for the module: Celery names the unit's task once per process."""
    app = fleet_app.make_app("redis://127.0.0.1:1/0")
    unit.register(app)
    return app


@pytest.fixture
def task(celery_app, monkeypatch, tmp_path):
    from celery.exceptions import Reject
    from celery.worker import state as worker_state
    client = FakeRedis()
    log = tmp_path / "log.txt"
    conf = celery_app.conf                 # as worker.serve sets it, afresh for each test
    conf.virtbench_host, conf.virtbench_store = "a", "sqlite:///x.db"
    conf.virtbench_redis = client
    conf.virtbench_console = Console(file=log.open("w"), width=300)
    monkeypatch.setenv("VIRTBENCH_STORE_RETRY_S", "0")
    monkeypatch.setattr(worker_state, "should_stop", None)
    handler = signal.getsignal(signal.SIGINT)
    yield SimpleNamespace(run=celery_app.tasks[fleet_app.TASK], client=client, Reject=Reject,
                          worker_state=worker_state, log=log)
    assert signal.getsignal(signal.SIGINT) is handler          # Ctrl-C's handler given back
    conf.virtbench_console.file.close()


def test_a_unit_for_another_host_goes_back_to_its_queue(task, monkeypatch):
    monkeypatch.setattr(unit, "run_unit", lambda *a: pytest.fail("ran a unit of host b"))
    with pytest.raises(task.Reject) as err:
        task.run("f1", "b")
    assert err.value.requeue and "unit for host b reached worker a" in str(err.value.reason)


def test_the_task_runs_the_unit_with_the_workers_broker_store_and_console(task, monkeypatch):
    seen = []
    monkeypatch.setattr(unit, "run_unit", lambda *a: seen.append(a) or "complete")
    assert task.run("f1", "a") == "complete"
    client, url, fleet, host, console = seen[0]
    assert (client, url, fleet, host) == (task.client, "sqlite:///x.db", "f1", "a")


def test_a_store_away_waits_and_hands_the_unit_back(task, monkeypatch):
    def away(*a):
        raise unit.StoreAway("store x: unreachable")
    monkeypatch.setattr(unit, "run_unit", away)
    with pytest.raises(task.Reject) as err:
        task.run("f1", "a")
    assert err.value.requeue and err.value.reason == "store away"
    st = state.get_state(task.client, "f1", "a")
    assert st["state"] == "waiting-for-store" and st["error"] == "store x: unreachable"
    assert task.worker_state.should_stop is None                 # the worker keeps serving
    assert "handing the unit back, next try in 0 s" in task.log.read_text()


def test_ctrl_c_hands_the_unit_back_and_stops_the_worker(task, monkeypatch):
    def interrupted(*a):
        raise KeyboardInterrupt
    monkeypatch.setattr(unit, "run_unit", interrupted)
    with pytest.raises(task.Reject) as err:
        task.run("f1", "a")
    assert err.value.requeue and err.value.reason == "interrupted"
    assert task.worker_state.should_stop == 0
    assert "handed back to the queue" in task.log.read_text()
