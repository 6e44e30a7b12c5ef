"""The lease against a real redis-server (a second delivery waits while the first lives,
takes over when it dies): its Lua scripts run here. The fleet's parts that need no broker
(names, Celery settings, status lines, a fleet's runs as one run) are in tests/unit/fleet/."""
from __future__ import annotations

import time

import redis

from redisserver import redis_server  # noqa: F401  (fixture)
from virtbench.execution.fleet import lease


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
