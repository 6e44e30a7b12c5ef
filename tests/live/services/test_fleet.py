"""One study on two hosts through Celery and a real redis-server: two `virtbench worker`
processes stand for hosts a and b; both runs land in one store and the fleet report sets the
hosts side by side. A worker killed mid-unit: the unit comes back, its run resumes, no sample
twice. Ctrl-C on a worker mid-unit hands the unit back."""
from __future__ import annotations

import json
import signal

import pytest

from fleetkit import Worker, count, queue_length, run_cli, wait_for
from pgserver import pg_server, pg_url  # noqa: F401  (fixtures)
from redisserver import redis_server  # noqa: F401  (fixture)
from virtbench.foundations.store import Store

# the quick native study, tiny: pi at its quick size (2^16 digits) is ~0.3 s a trial
TINY = ("--env", "native", "--bench", "pi", "--trials", "3", "--seed", "5", "--quick", "--min-section", "0")
# long enough to kill mid-way: ~0.4 s a trial, 9 trials (one a warm-up)
LONGER = ("--env", "native", "--bench", "pi:k=17", "--trials", "8", "--seed", "7")


@pytest.fixture(params=["postgresql", "sqlite"])
def fleet_store(request, tmp_path):
    """The team's store a fleet is for (PostgreSQL) or one SQLite file the local workers
    share; each test below says which it needs."""
    if request.param == "postgresql":
        url = request.getfixturevalue("pg_url")
    else:
        url = f"sqlite:///{tmp_path / 'store.db'}"
    Store(url)          # the schema exists before two workers open it at once
    return url


on_postgresql = pytest.mark.parametrize("fleet_store", ["postgresql"], indirect=True)
on_sqlite = pytest.mark.parametrize("fleet_store", ["sqlite"], indirect=True)


@pytest.fixture
def workers(redis_server, fleet_store, tmp_path):  # noqa: F811
    started: list[Worker] = []

    def start(*names: str) -> Worker:
        """Workers for `names`, started side by side; the last one."""
        ws = [Worker(n, redis_server.url, fleet_store, tmp_path) for n in names]
        started.extend(ws)
        return [w.wait_ready() for w in ws][-1]
    yield start
    for w in started:
        w.stop()


def _host_runs(store_url: str, fleet_id: str) -> dict[str, dict]:
    return {r["host"]: r for r in Store(store_url).fleet_runs(fleet_id)}


@on_postgresql
def test_fleet_run_on_two_hosts_lands_in_one_store_and_reports_side_by_side(
        redis_server, fleet_store, workers):  # noqa: F811
    workers("a", "b")
    res = run_cli(redis_server.url, fleet_store, "fleet", "run", *TINY,
                  "--host", "a", "--host", "b", "--wait")
    assert res.returncode == 0, res.stderr
    fleet_id = res.stdout.strip()
    assert fleet_id.startswith("fleet-")
    runs = _host_runs(fleet_store, fleet_id)
    assert set(runs) == {"a", "b"}
    assert all(r["status"] == "complete" and r["fleet"] == fleet_id for r in runs.values())
    for r in runs.values():
        assert count(fleet_store, "select count(*) from trials where run_id = :r and trial >= 0",
                     r=r["id"]) == 3
    # --wait said how each host ended
    assert "a: complete" in res.stderr and "b: complete" in res.stderr

    status = run_cli(redis_server.url, fleet_store, "fleet", "status", fleet_id)
    assert status.returncode == 0, status.stderr
    assert "a: complete" in status.stdout and "b: complete" in status.stdout

    rep = run_cli(redis_server.url, fleet_store, "report", "--fleet", fleet_id,
                  "--format", "json")
    assert rep.returncode == 0, rep.stderr
    doc = json.loads(rep.stdout)
    assert doc["run"]["fleet"] == fleet_id
    assert doc["run"]["hosts"] == ["a", "b"]
    assert {e["label"]: e["host"] for e in doc["environments"]} == {"a:native": "a",
                                                                    "b:native": "b"}
    rows = {r["environment"]: r for r in doc["results"]}
    assert rows["a:native"]["vs_baseline"] is None          # the first host is the reference
    assert rows["b:native"]["vs_baseline"]["reference"] == "a:native"
    assert rows["b:native"]["vs_baseline"]["verdict"] in ("pass", "fail", "inconclusive")
    table = run_cli(redis_server.url, fleet_store, "report", "--fleet", fleet_id)
    assert "a:native" in table.stdout and "b:native" in table.stdout


@on_postgresql
def test_worker_killed_mid_unit_the_unit_comes_back_and_its_run_resumes(
        redis_server, fleet_store, workers):  # noqa: F811
    first = workers("a")
    res = run_cli(redis_server.url, fleet_store, "fleet", "run", *LONGER, "--host", "a")
    assert res.returncode == 0, res.stderr
    fleet_id = res.stdout.strip()
    measured = "select count(*) from trials where trial >= 0"
    wait_for(lambda: count(fleet_store, measured) >= 2, 30, "two trials on host a")
    first.kill_hard()
    before = count(fleet_store, measured)
    assert before < 8, "the unit ended before the kill: make LONGER longer"

    second = workers("a")
    wait_for(lambda: _host_runs(fleet_store, fleet_id)["a"]["status"] == "complete", 45,
             "the redelivered unit to complete")
    assert "resuming run" in second.text()
    runs = Store(fleet_store).fleet_runs(fleet_id)
    assert len(runs) == 1                               # resumed, not started again
    run_id = runs[0]["id"]
    assert count(fleet_store, "select count(*) from trials where run_id = :r", r=run_id) == 9
    assert count(fleet_store, "select count(distinct trial) from trials where run_id = :r",
                 r=run_id) == 9
    assert count(fleet_store, "select count(*) from samples s join trials t on s.trial_id = t.id "
                              "where t.run_id = :r and t.trial >= 0", r=run_id) == 8
    wait_for(lambda: queue_length(redis_server.url, "a") == 0, 10, "the queue to drain")


@on_sqlite
def test_ctrl_c_on_a_worker_mid_unit_hands_the_unit_back(redis_server, fleet_store, workers):  # noqa: F811
    first = workers("a")
    res = run_cli(redis_server.url, fleet_store, "fleet", "run", *LONGER, "--host", "a")
    fleet_id = res.stdout.strip()
    wait_for(lambda: count(fleet_store, "select count(*) from trials where trial >= 0") >= 1,
             30, "a trial on host a")
    first.signal(signal.SIGINT)
    assert first.proc.wait(20) == 0, first.text()
    assert "handed back to the queue" in first.text()
    assert _host_runs(fleet_store, fleet_id)["a"]["status"] == "interrupted"
    assert queue_length(redis_server.url, "a") == 1       # back at once, not after a timeout
    workers("a")
    wait_for(lambda: _host_runs(fleet_store, fleet_id)["a"]["status"] == "complete", 45,
             "the resumed run")
    assert len(Store(fleet_store).fleet_runs(fleet_id)) == 1


@on_postgresql
def test_store_gone_mid_unit_the_unit_waits_and_resumes_when_it_is_back(
        redis_server, fleet_store, workers, pg_server):  # noqa: F811
    w = workers("a")
    res = run_cli(redis_server.url, fleet_store, "fleet", "run", *LONGER, "--host", "a")
    fleet_id = res.stdout.strip()
    measured = "select count(*) from trials where trial >= 0"
    wait_for(lambda: count(fleet_store, measured) >= 2, 30, "two trials on host a")
    pg_server.stop()
    try:
        wait_for(lambda: "handing the unit back" in w.text(), 30, "the unit to be handed back")
    finally:
        pg_server.start()
    wait_for(lambda: _host_runs(fleet_store, fleet_id)["a"]["status"] == "complete", 60,
             "the run to resume and complete")
    runs = Store(fleet_store).fleet_runs(fleet_id)
    assert len(runs) == 1
    assert count(fleet_store, "select count(distinct trial) from trials where run_id = :r",
                 r=runs[0]["id"]) == 9 == count(
        fleet_store, "select count(*) from trials where run_id = :r", r=runs[0]["id"])
    assert w.proc.poll() is None          # the worker stayed up throughout
