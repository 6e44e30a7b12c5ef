"""The unit itself, in this process, against a real redis-server and a SQLite store: a second
delivery of a unit whose run is complete runs nothing; a delivery while another holds the
unit's lease waits for it, then resumes rather than starts; a host that cannot run the study
fails its unit with why."""
from __future__ import annotations

import threading
import time

import redis
from rich.console import Console

from redisserver import redis_server  # noqa: F401  (fixture)
from virtbench.execution.fleet import lease, state
from virtbench.execution.fleet.unit import run_unit
from virtbench.foundations.store import Store, TrialRecord
from virtbench.study.flags import StudyFlags, with_flags


def _fleet(tmp_path, envs=("native",)):
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store(url)
    study = with_flags(None, StudyFlags(env=list(envs), bench=["pi:k=10"], trials=2, seed=3))
    return url, store, store.create_fleet(study.to_dict(), ["a"])


def _console(tmp_path):
    return Console(file=(tmp_path / "log.txt").open("w"), width=200)


def test_a_second_delivery_of_a_complete_unit_runs_nothing(redis_server, tmp_path):  # noqa: F811
    client = redis.Redis.from_url(redis_server.url)
    url, store, fleet = _fleet(tmp_path)
    assert run_unit(client, url, fleet, "a", _console(tmp_path)) == "complete"
    run = store.fleet_runs(fleet)[0]
    assert (run["host"], run["fleet"], run["status"]) == ("a", fleet, "complete")
    n = len(store.trials(run["id"], include_warmup=True))
    assert run_unit(client, url, fleet, "a", _console(tmp_path)) == "complete"
    assert len(store.fleet_runs(fleet)) == 1
    assert len(store.trials(run["id"], include_warmup=True)) == n == 3
    assert "nothing to do" in (tmp_path / "log.txt").read_text()
    assert client.keys("virtbench:lease:*") == []            # released


def test_a_delivery_waits_for_the_live_holder_then_resumes(redis_server, tmp_path):  # noqa: F811
    client = redis.Redis.from_url(redis_server.url)
    url, store, fleet = _fleet(tmp_path)
    # the first delivery: it has started the run (one trial stored) and still holds the lease
    holder = lease.unit_lease(client, fleet, "a", ttl=1.0)
    assert holder.try_acquire()
    from virtbench.execution.run.runner import prepare
    from virtbench.study.design import Study
    prepared = prepare(Study.from_dict(store.get_fleet(fleet)["study"]))
    run_id = store.create_run(prepared.study.to_dict(), seed=3, quick=False, version="t",
                              host="a", fleet=fleet)
    for label, env in prepared.envs.items():
        store.upsert_environment(run_id, label, kind=env.kind, spec=str(env.spec), options={},
                                 status="planned")
    seen = {}

    def first_delivery_ends():
        time.sleep(2.5)                  # > 2 ttls: the holder's heartbeat kept the lease
        seen["trials while held"] = len(store.trials(run_id, include_warmup=True))
        holder.release()
    threading.Thread(target=first_delivery_ends).start()
    t0 = time.monotonic()
    assert run_unit(client, url, fleet, "a", _console(tmp_path)) == "complete"
    assert time.monotonic() - t0 >= 2.5
    assert seen["trials while held"] == 0
    assert [r["id"] for r in store.fleet_runs(fleet)] == [run_id]     # resumed, not another
    assert "waiting for it (lease)" in (tmp_path / "log.txt").read_text()
    assert store.get_run(run_id)["status"] == "complete"


def test_a_host_that_cannot_run_the_study_fails_its_unit_with_why(redis_server, tmp_path,  # noqa: F811
                                                                  monkeypatch):
    from virtbench.measure.environments import KINDS
    from virtbench.measure.environments.base import Usability
    client = redis.Redis.from_url(redis_server.url)
    url, store, fleet = _fleet(tmp_path)
    # this host, unlike the one that enqueued, cannot run the study's environment
    monkeypatch.setattr(KINDS["native"], "probe",
                        classmethod(lambda cls: Usability(False, "no such thing here")))
    assert run_unit(client, url, fleet, "a", _console(tmp_path)) == "failed"
    st = state.get_state(client, fleet, "a")
    assert st["state"] == "failed" and "not usable here: no such thing here" in st["error"]
    assert store.fleet_runs(fleet) == []


def test_fleet_status_per_host(redis_server, tmp_path):  # noqa: F811
    from virtbench.execution.fleet.status import fleet_status
    client = redis.Redis.from_url(redis_server.url)
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store(url)
    fleet = store.create_fleet({"name": "s"}, ["q", "f", "r", "w"])
    state.set_state(client, fleet, "q", "queued", enqueued=time.time())
    state.set_state(client, fleet, "f", "failed", error="environment qemu: not usable here")
    runs = {}
    for h in ("r", "w"):
        runs[h] = store.create_run({"name": "s"}, seed=1, quick=False, version="t", host=h,
                                   fleet=fleet)
        store.record_trial(runs[h], TrialRecord(
            environment="native", benchmark="pi", benchmark_name="pi",
            params={}, trial=0, seq=0, status="ok", samples=[]))
    state.set_state(client, fleet, "r", "running", run=runs["r"], done=1, total=6)
    state.set_state(client, fleet, "w", "waiting-for-store", error="store x went away")
    lines = [s.line() for s in fleet_status(store, client, fleet)]
    assert lines == ["q: queued", "f: failed: environment qemu: not usable here",
                     f"r: running (1/6 trials), run {runs['r']}",
                     f"w: waiting for the store, run {runs['w']}: store x went away"]
    store.set_run_status(runs["r"], "complete")
    assert fleet_status(store, client, fleet)[2].line() == f"r: complete, run {runs['r']}"
    # without the broker: what the store knows
    assert [s.state for s in fleet_status(store, None, fleet)] == \
        ["queued", "queued", "complete", "running"]
