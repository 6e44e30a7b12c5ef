"""`virtbench fleet status` and `fleet run --wait` (fleet/status.py): each host's line from
its run row in the store and its unit's state in the broker, and the wait that says each
change once and ends when every host's run has."""
from __future__ import annotations

import threading
import time

from brokerkit import FakeRedis
from virtbench.execution.fleet import state
from virtbench.execution.fleet.status import HostStatus, fleet_status, wait
from virtbench.foundations.store import Store, TrialRecord


def test_status_lines():
    assert HostStatus("a", "queued").line() == "a: queued"
    assert HostStatus("a", "running", "r1", 3, 12).line() == "a: running (3/12 trials), run r1"
    assert HostStatus("a", "running", "r1", 3, None).line() == "a: running, run r1"
    assert HostStatus("b", "failed", error="environment qemu: not usable here").line() == \
        "b: failed: environment qemu: not usable here"
    assert HostStatus("a", "complete", "r1", 12, 12, failed_trials=2).line() == \
        "a: complete, run r1, 2 trial(s) failed"
    assert HostStatus("a", "complete", "r1", 12, 12).ended
    assert HostStatus("b", "failed").ended and not HostStatus("c", "running").ended


def _run(store: Store, fleet: str, host: str, trials: int = 1) -> str:
    run = store.create_run({"name": "s"}, seed=1, quick=False, version="t", host=host,
                           fleet=fleet)
    for i in range(trials):
        store.record_trial(run, TrialRecord(
            environment="native", benchmark="pi", benchmark_name="pi",
            params={}, trial=i, seq=i, status="ok" if i else "failed", samples=[]))
    return run


def test_each_hosts_status_from_its_run_and_its_units_state(tmp_path):
    client = FakeRedis()
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    fleet = store.create_fleet({"name": "s"}, ["q", "f", "r", "w"])
    state.set_state(client, fleet, "q", "queued", enqueued=time.time())
    state.set_state(client, fleet, "f", "failed", error="environment qemu: not usable here")
    runs = {h: _run(store, fleet, h, trials=2) for h in ("r", "w")}
    state.set_state(client, fleet, "r", "running", run=runs["r"], done=2, total=6)
    state.set_state(client, fleet, "w", "waiting-for-store", error="store x went away")
    assert [s.line() for s in fleet_status(store, client, fleet)] == [
        "q: queued", "f: failed: environment qemu: not usable here",
        f"r: running (2/6 trials), run {runs['r']}, 1 trial(s) failed",
        f"w: waiting for the store, run {runs['w']}: store x went away"]
    store.set_run_status(runs["r"], "complete")
    assert fleet_status(store, client, fleet)[2].line() == \
        f"r: complete, run {runs['r']}, 1 trial(s) failed"
    # without the broker: what the store knows
    assert [s.state for s in fleet_status(store, None, fleet)] == \
        ["queued", "queued", "complete", "running"]


def test_wait_says_each_change_once_and_ends_when_every_run_has(tmp_path):
    client = FakeRedis()
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    fleet = store.create_fleet({"name": "s"}, ["a", "b"])
    run_a = _run(store, fleet, "a")
    store.set_run_status(run_a, "complete")
    run_b = _run(store, fleet, "b")
    state.set_state(client, fleet, "b", "running", run=run_b, total=4)

    def b_ends():
        time.sleep(0.3)
        store.set_run_status(run_b, "complete")
        state.set_state(client, fleet, "b", "complete", run=run_b)   # announced: wakes wait

    said = []
    ender = threading.Thread(target=b_ends)
    ender.start()
    t0 = time.monotonic()
    rows = wait(store, client, fleet, said.append, poll_s=30)
    ender.join()
    assert time.monotonic() - t0 < 10                 # woken by the announcement, not the poll
    assert [r.state for r in rows] == ["complete", "complete"]
    assert said == [f"a: complete, run {run_a}, 1 trial(s) failed",
                    f"b: running (1/4 trials), run {run_b}, 1 trial(s) failed",
                    f"b: complete, run {run_b}, 1 trial(s) failed"]
    assert all(s.closed for s in client.subscribers)
