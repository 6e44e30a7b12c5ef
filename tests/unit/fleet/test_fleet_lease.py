"""The lease of a unit and a worker's presence (fleet/lease.py) against an in-memory broker:
a live holder keeps its key, a dead one's expires and a waiter takes over, a release never
deletes a key someone else holds, and a renewal that finds the key gone says so."""
from __future__ import annotations

import time

from brokerkit import FakeRedis
from virtbench.execution.fleet import lease


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_lease_is_exclusive_while_held_and_free_once_released():
    client = FakeRedis()
    first = lease.unit_lease(client, "f1", "a", ttl=30)
    second = lease.unit_lease(client, "f1", "a", ttl=30)
    assert first.key == second.key == "virtbench:lease:f1:a"
    assert first.try_acquire()
    assert client.get(first.key) == first.holder.encode()
    assert not second.try_acquire()
    first.release()
    assert client.get(first.key) is None
    assert second.try_acquire()
    second.release()


def test_a_dead_holders_lease_expires_and_the_waiter_says_whom_it_waited_for(monkeypatch):
    clock = Clock()
    client = FakeRedis(clock)
    client.set("virtbench:lease:f1:a", "dead-host:1:x", px=2000)   # no heartbeat behind it
    waiter = lease.unit_lease(client, "f1", "a", ttl=30)
    seen, polls = [], []

    def sleep(seconds):
        polls.append(seconds)
        clock.now += 1.0

    monkeypatch.setattr(lease.time, "sleep", sleep)
    waiter.wait_acquire(poll_s=0.5, on_wait=seen.append)
    monkeypatch.undo()
    waiter.release()
    assert seen == [b"dead-host:1:x"]           # said once, however long it waited
    assert polls == [0.5, 0.5]                   # free once its 2 s ran out


def test_release_leaves_a_key_another_holder_took():
    client = FakeRedis()
    mine = lease.unit_lease(client, "f1", "a", ttl=30)
    assert mine.try_acquire()
    client.set(mine.key, "other", px=5000)       # mine expired while stalled; another took it
    mine.release()
    assert client.get(mine.key) == b"other"


def test_the_heartbeat_renews_the_key_and_notices_losing_it():
    client = FakeRedis()
    beat = lease.Heartbeat(client, "virtbench:lease:f1:b", ttl=0.15)
    assert beat.try_acquire()
    time.sleep(0.4)                              # past the ttl: renewed every ttl/3
    assert client.get(beat.key) == beat.holder.encode() and not beat.lost
    client.set(beat.key, "someone-else")
    time.sleep(0.15)
    assert beat.lost
    beat.release()
    assert client.get(beat.key) == b"someone-else"


def test_a_broker_away_for_a_beat_does_not_stop_the_heartbeat():
    client = FakeRedis()
    beat = lease.Heartbeat(client, "virtbench:lease:f1:c", ttl=0.6)
    assert beat.try_acquire()
    client.fail_eval = ConnectionError("broker away")
    time.sleep(0.3)                              # beats that fail
    client.fail_eval = None
    time.sleep(0.5)                              # beats again: the key outlived its first ttl
    assert beat._thread.is_alive() and not beat.lost
    assert client.get(beat.key) == beat.holder.encode()
    client.fail_eval = ConnectionError("broker away")
    beat.release()                               # it expires by itself: no error
    assert not beat._thread.is_alive()


def test_a_workers_presence_and_who_is_present():
    client = FakeRedis()
    presence = lease.worker_presence(client, "a", ttl=5)
    assert presence.key == "virtbench:worker:a" and presence.ttl == 5
    presence.hold()
    presence.hold()                              # the last one started wins, no error
    assert lease.present_workers(client, ["a", "b"]) == {"a"}
    presence.release()
    assert lease.present_workers(client, ["a", "b"]) == set()
    assert lease.present_workers(None, []) == set()  # no hosts: the broker is not asked


def test_the_ttl_from_the_environment_and_a_holder_per_process_and_lease(monkeypatch):
    monkeypatch.delenv("VIRTBENCH_LEASE_TTL", raising=False)
    assert lease.lease_ttl() == lease.DEFAULT_TTL
    monkeypatch.setenv("VIRTBENCH_LEASE_TTL", "2.5")
    assert lease.unit_lease(FakeRedis(), "f", "a").ttl == 2.5
    host, pid, tag = lease.holder_id().rsplit(":", 2)
    assert host and int(pid) > 0 and len(tag) == 8
    assert lease.holder_id() != lease.holder_id()
