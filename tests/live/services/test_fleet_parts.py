"""The fleet's small parts on their own: the lease against a real redis-server (a second
delivery waits while the first lives, takes over when it dies), the host-against-host
references, a fleet's runs seen as one run, the status lines, the Celery settings."""
from __future__ import annotations

import json
import time

import pytest
import redis

from fleetkit import host_run
from redisserver import redis_server  # noqa: F401  (fixture)
from virtbench.core.errors import VirtbenchError
from virtbench.execution.fleet import app as fleet_app, lease
from virtbench.execution.fleet.status import HostStatus
from virtbench.execution.fleet.side_by_side import FleetView, HostReferences, analyze_fleet
from virtbench.foundations.store import Sample, Store


def test_lease_is_exclusive_while_its_holder_beats_and_free_when_released(redis_server):  # noqa: F811
    client = redis.Redis.from_url(redis_server.url)
    first = lease.unit_lease(client, "fleet-x", "a", ttl=0.6)
    second = lease.unit_lease(client, "fleet-x", "a", ttl=0.6)
    assert first.try_acquire()
    time.sleep(1.5)                    # well past the ttl: the heartbeat kept it
    assert not second.try_acquire()
    first.release()
    assert second.try_acquire()
    second.release()
    assert client.keys("virtbench:lease:*") == []


def test_a_dead_holders_lease_expires_and_a_waiter_takes_it(redis_server):  # noqa: F811
    client = redis.Redis.from_url(redis_server.url)
    # a holder that died: the key without a heartbeat behind it
    client.set("virtbench:lease:fleet-x:a", "dead-host:1:x", px=700)
    waiter = lease.unit_lease(client, "fleet-x", "a", ttl=5)
    seen = []
    t0 = time.monotonic()
    waiter.wait_acquire(poll_s=0.05, on_wait=seen.append)
    assert 0.4 < time.monotonic() - t0 < 3
    assert seen == [b"dead-host:1:x"]
    # releasing never deletes a key someone else holds now
    client.set("virtbench:lease:fleet-x:a", "other", px=5000)
    waiter.release()
    assert client.get("virtbench:lease:fleet-x:a") == b"other"


def test_worker_presence(redis_server):  # noqa: F811
    client = redis.Redis.from_url(redis_server.url)
    p = lease.worker_presence(client, "a", ttl=5)
    p.hold()
    assert lease.present_workers(client, ["a", "b"]) == {"a"}
    p.release()
    assert lease.present_workers(client, ["a", "b"]) == set()


def test_queue_names_and_host_names():
    assert fleet_app.queue_name("gen9-kvm") == "virtbench.machinery.host.gen9-kvm"
    for bad in ("", "a:b", "a b", "-x", "a/b"):
        with pytest.raises(VirtbenchError, match="host name"):
            fleet_app.check_host(bad)
    with pytest.raises(VirtbenchError, match="only Redis"):
        fleet_app.check_broker_url("amqp://x")


def test_celery_settings_deliver_one_unit_at_a_time_at_least_once(monkeypatch):
    monkeypatch.setenv("VIRTBENCH_VISIBILITY_TIMEOUT", "8")
    conf = fleet_app.make_app("redis://127.0.0.1:1/0").conf
    assert conf.task_acks_late and conf.task_reject_on_worker_lost
    assert conf.worker_prefetch_multiplier == 1 and conf.worker_concurrency == 1
    assert conf.broker_transport_options["visibility_timeout"] == 8.0
    assert conf.broker_transport_options["unacked_restore_interval"] == 2
    monkeypatch.delenv("VIRTBENCH_VISIBILITY_TIMEOUT")
    assert fleet_app.make_app("redis://x/0").conf.broker_transport_options[
        "visibility_timeout"] == fleet_app.DEFAULT_VISIBILITY_TIMEOUT


def test_host_references_compare_each_host_with_the_first():
    envs = [{"label": f"{h}:{l}", "metadata": {}} for h in ("a", "b") for l in ("native", "qemu-tcg")]
    envs.append({"label": "b:ssh", "metadata": {}})
    refs = HostReferences(["a", "b"], "a:native", envs)
    assert refs.for_row("a:native", "s", {"s"}).label is None            # the reference
    assert refs.for_row("a:qemu-tcg", "s", {"s"}).label == "a:native"     # a's own report
    r = refs.for_row("b:native", "s", {"s"})
    assert (r.label, r.metric, r.basis) == ("a:native", "s", "host")
    assert refs.for_row("b:qemu-tcg", "s", {"s"}).label == "a:qemu-tcg"
    lone = refs.for_row("b:ssh", "s", {"s"})
    assert lone.label is None and "host a has no ssh" in lone.note


def test_fleet_view_reports_hosts_side_by_side_with_the_usual_statistics(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    fleet = store.create_fleet({"name": "s"}, ["a", "b", "c"])
    host_run(store, fleet, "a", [1.0, 1.01, 0.99, 1.0, 1.02, 0.98])
    host_run(store, fleet, "b", [2.0, 2.02, 1.98, 2.0, 2.01, 1.99])
    doc = analyze_fleet(store, fleet)
    assert doc["run"]["fleet"] == fleet and doc["run"]["hosts"] == ["a", "b"]
    assert [e["label"] for e in doc["environments"]] == ["a:native", "b:native"]
    b = next(r for r in doc["results"] if r["environment"] == "b:native")
    assert b["vs_baseline"]["reference"] == "a:native"
    assert b["vs_baseline"]["overhead_pct"] == pytest.approx(100, abs=2)
    assert b["vs_baseline"]["verdict"] == "fail"
    assert any(w["kind"] == "host_without_run" and "c" in w["message"] for w in doc["warnings"])
    assert FleetView(store, fleet).get_run()["status"] == "complete"
    from virtbench.results.report.fmt.header import header_lines
    assert any(line.startswith("fleet on 2 host(s): a (run ") and "against a's same" in line
               for line in header_lines(doc))
    empty = store.create_fleet({"name": "s"}, ["x"])
    with pytest.raises(VirtbenchError, match="has no run yet"):
        analyze_fleet(store, empty)


def test_status_lines():
    assert HostStatus("a", "queued").line() == "a: queued"
    assert HostStatus("a", "running", "r1", 3, 12).line() == "a: running (3/12 trials), run r1"
    assert HostStatus("b", "failed", error="environment qemu: not usable here").line() == \
        "b: failed: environment qemu: not usable here"
    assert HostStatus("a", "complete", "r1", 12, 12).ended


def test_compare_fleet_sets_two_hosts_a_b_and_runs_carry_their_fleet(tmp_path, capsys):
    from virtbench.results import analysis
    from virtbench.interface.cli import commands as cli
    from virtbench.execution.fleet.side_by_side import host_runs
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store(url)
    fleet = store.create_fleet({"name": "s"}, ["a", "b", "c"])
    ra = host_run(store, fleet, "a", [1.0, 1.01, 0.99, 1.0, 1.02, 0.98])
    rb = host_run(store, fleet, "b", [2.0, 2.02, 1.98, 2.0, 2.01, 1.99])
    assert host_runs(store, fleet, None, None) == (ra, rb)
    assert host_runs(store, fleet, "b", "a") == (rb, ra)
    with pytest.raises(VirtbenchError, match="no run on host 'c'"):
        host_runs(store, fleet, "a", "c")
    assert analysis.analyze_run(store, ra)["run"]["fleet"] == fleet
    assert cli.main(["compare", "--fleet", fleet, "--store", url, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["a"]["host"], doc["b"]["host"]) == ("a", "b")
    row = doc["rows"][0]
    assert row["environment"] == "native" and row["verdict"] == "worse"
    assert cli.main(["compare", "--store", url]) == 2
