"""The fleet's Celery app (fleet/app.py): host and queue names, the broker URL, the
visibility timeout, and the settings that deliver one unit at a time, at least once. Making
the app connects to nothing."""
from __future__ import annotations

import pytest

from virtbench.core.errors import VirtbenchError
from virtbench.execution.fleet import app as fleet_app


def test_queue_names_and_host_names():
    # a queue name is what workers of every version consume: not a module path to move
    assert fleet_app.queue_name("gen9-kvm") == "virtbench.host.gen9-kvm"
    for bad in ("", "a:b", "a b", "-x", "a/b", "x" * 101):
        with pytest.raises(VirtbenchError, match="host name"):
            fleet_app.check_host(bad)


def test_the_broker_is_redis_and_given():
    assert fleet_app.check_broker_url("rediss://h:6380/1") == "rediss://h:6380/1"
    with pytest.raises(VirtbenchError, match="only Redis"):
        fleet_app.check_broker_url("amqp://x")
    with pytest.raises(VirtbenchError, match="no broker: give --broker"):
        fleet_app.check_broker_url(None)


def test_the_visibility_timeout(monkeypatch):
    monkeypatch.delenv("VIRTBENCH_VISIBILITY_TIMEOUT", raising=False)
    assert fleet_app.visibility_timeout() == fleet_app.DEFAULT_VISIBILITY_TIMEOUT
    assert fleet_app.visibility_timeout(3) == 3
    monkeypatch.setenv("VIRTBENCH_VISIBILITY_TIMEOUT", "8")
    assert fleet_app.visibility_timeout() == 8.0
    for bad in (0, -1):
        with pytest.raises(VirtbenchError, match="give a number of seconds > 0"):
            fleet_app.visibility_timeout(bad)


def test_celery_settings_deliver_one_unit_at_a_time_at_least_once(monkeypatch):
    monkeypatch.setenv("VIRTBENCH_VISIBILITY_TIMEOUT", "8")
    conf = fleet_app.make_app("redis://127.0.0.1:1/0").conf
    assert conf.task_acks_late and conf.task_reject_on_worker_lost
    assert conf.worker_prefetch_multiplier == 1 and conf.worker_concurrency == 1
    assert conf.broker_transport_options["visibility_timeout"] == 8.0
    assert conf.broker_transport_options["unacked_restore_interval"] == 2
    assert conf.task_default_queue == "virtbench.host.default"
    monkeypatch.delenv("VIRTBENCH_VISIBILITY_TIMEOUT")
    assert fleet_app.make_app("redis://x/0").conf.broker_transport_options[
        "visibility_timeout"] == fleet_app.DEFAULT_VISIBILITY_TIMEOUT
    assert fleet_app.make_app("redis://x/0", 100).conf.broker_transport_options[
        "unacked_restore_interval"] == 10
