"""`virtbench fleet run` (fleet/enqueue.py) with the broker, the store and Celery faked: every
check first, each failure one line, nothing written or enqueued unless all pass; then the
fleet row, one trial order for every host, and one unit per host on its own queue."""
from __future__ import annotations

import pytest

from brokerkit import FakeRedis
from virtbench.core.errors import VirtbenchError
from virtbench.execution.fleet import enqueue, lease, state
from virtbench.foundations.store import Store
from virtbench.study.flags import StudyFlags, with_flags


class FakeInspect:
    def __init__(self, queues: dict):
        self.queues = queues

    def active_queues(self):
        return self.queues


class FakeApp:
    """What enqueue asks of the Celery app: remote control's active queues, send_task."""

    def __init__(self, served: list[str] = ()):
        self.replies = {f"w-{h}@x": [{"name": f"virtbench.host.{h}"}] for h in served}
        self.sent = []
        self.control = self

    def inspect(self, timeout: float):
        return FakeInspect(self.replies)

    def send_task(self, name, args, queue):
        self.sent.append((name, args, queue))


def test_hosts_are_named_once_each():
    assert enqueue.check_hosts(["a", "b"]) == ["a", "b"]
    with pytest.raises(VirtbenchError, match="no host: name each host with --host NAME"):
        enqueue.check_hosts([])
    with pytest.raises(VirtbenchError, match="host a named twice"):
        enqueue.check_hosts(["a", "b", "a"])
    with pytest.raises(VirtbenchError, match="host name 'a b'"):
        enqueue.check_hosts(["a b"])


def test_a_host_is_served_by_an_idle_worker_answering_or_a_busy_ones_presence():
    client = FakeRedis()
    lease.worker_presence(client, "busy", ttl=30).hold()
    app = FakeApp(served=["idle"])
    assert enqueue.served_hosts(app, client, ["busy", "idle"], 5) == {"busy", "idle"}
    assert enqueue.served_hosts(app, client, ["idle", "gone"], 0.3) == {"idle"}


@pytest.fixture
def checks(monkeypatch, tmp_path):
    """fleet_run's world: the study's own check, the broker, the store, the Celery app."""
    world = {"client": FakeRedis(), "store": Store(f"sqlite:///{tmp_path / 's.db'}"),
             "app": FakeApp(served=["a", "b"]), "prepared": []}

    def reach(what):
        def get(*args):
            if isinstance(world[what], Exception):
                raise world[what]
            return world[what]
        return get

    monkeypatch.setattr(enqueue, "prepare",
                        lambda study, dry_run: world["prepared"].append(dry_run))
    monkeypatch.setattr(enqueue, "redis_client", reach("client"))
    monkeypatch.setattr(enqueue, "Store", reach("store"))
    monkeypatch.setattr(enqueue, "make_app", reach("app"))
    return world


def _study(seed=None):
    return with_flags(None, StudyFlags(env=["native"], bench=["pi:k=10"], trials=2, seed=seed))


def test_fleet_run_writes_the_fleet_and_enqueues_one_unit_per_host(checks):
    fleet_id = enqueue.fleet_run(_study(), ["a", "b"], "redis://h/0", "sqlite:///s.db", 1)
    fleet = checks["store"].get_fleet(fleet_id)
    assert fleet["hosts"] == ["a", "b"] and checks["prepared"] == [True]
    assert isinstance(fleet["study"]["seed"], int)        # one trial order for every host
    assert checks["app"].sent == [("virtbench.unit", [fleet_id, "a"], "virtbench.host.a"),
                                  ("virtbench.unit", [fleet_id, "b"], "virtbench.host.b")]
    for h in ("a", "b"):
        assert state.get_state(checks["client"], fleet_id, h)["state"] == "queued"
    given = enqueue.fleet_run(_study(seed=7), ["a"], "redis://h/0", None, 1)
    assert checks["store"].get_fleet(given)["study"]["seed"] == 7


def test_every_failed_check_is_its_own_line_and_nothing_is_written(checks):
    checks["client"] = VirtbenchError("broker redis://h/0: unreachable (refused)")
    checks["store"] = VirtbenchError("store sqlite:///s.db: cannot open")
    with pytest.raises(VirtbenchError) as err:
        enqueue.fleet_run(_study(), ["a"], "redis://h/0", "sqlite:///s.db", 1)
    assert str(err.value) == ("broker redis://h/0: unreachable (refused)\n"
                              "virtbench: store sqlite:///s.db: cannot open")
    assert checks["app"].sent == []


def test_a_host_without_a_worker_is_named_with_the_command_that_serves_it(checks):
    with pytest.raises(VirtbenchError) as err:
        enqueue.fleet_run(_study(), ["a", "c"], "redis://:pw@h/0", "sqlite:///s.db", 0.2)
    line = str(err.value)
    assert line.startswith("host c: no worker consumes its queue virtbench.host.c (waited 0.2 s)")
    assert "virtbench worker --name c --broker redis://:***@h/0 --store URL" in line
    assert "pw" not in line and "\n" not in line
    assert checks["app"].sent == [] and checks["store"].list_fleets() == []


def test_the_studys_own_errors_come_before_any_broker_is_asked(checks, monkeypatch):
    def bad(study, dry_run):
        raise VirtbenchError("environment nope: unknown kind")
    monkeypatch.setattr(enqueue, "prepare", bad)
    monkeypatch.setattr(enqueue, "redis_client", lambda url: pytest.fail("asked the broker"))
    with pytest.raises(VirtbenchError, match="unknown kind"):
        enqueue.fleet_run(_study(), ["a"], "redis://h/0", None, 1)
