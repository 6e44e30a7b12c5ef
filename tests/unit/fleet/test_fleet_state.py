"""A unit's state in the broker (fleet/state.py): one hash per fleet and host, its fields
JSON, kept a month, and each change announced on the fleet's channel."""
from __future__ import annotations

from brokerkit import FakeRedis
from virtbench.execution.fleet import state


def test_set_state_writes_the_fields_keeps_them_a_month_and_announces_the_change():
    client = FakeRedis()
    state.set_state(client, "f1", "a", "running", run="r1", done=3, total=12)
    key = state.key("f1", "a")
    assert key == "virtbench:unit:f1:a"
    got = client.fields(key)
    assert {k: got[k] for k in ("state", "run", "done", "total")} == \
        {"state": "running", "run": "r1", "done": 3, "total": 12}
    assert isinstance(got["updated"], float)
    assert state.KEEP_S - 5 < client.ttl(key) <= state.KEEP_S
    assert client.published == [("virtbench:fleet:f1", "a running")]


def test_a_later_state_keeps_the_fields_it_does_not_set():
    client = FakeRedis()
    state.set_state(client, "f1", "a", "running", run="r1", total=12)
    state.set_state(client, "f1", "a", "complete", run="r1", failed_trials=0)
    got = state.get_state(client, "f1", "a")
    assert got["state"] == "complete" and got["total"] == 12 and got["failed_trials"] == 0
    assert [m for _, m in client.published] == ["a running", "a complete"]


def test_get_state_reads_bytes_as_redis_gives_them_and_nothing_when_absent():
    client = FakeRedis()
    client.hset(state.key("f1", "b"), mapping={b"state": b'"failed"', b"error": b'"no kvm"'})
    assert state.get_state(client, "f1", "b") == {"state": "failed", "error": "no kvm"}
    assert state.get_state(client, "f1", "nobody") == {}
