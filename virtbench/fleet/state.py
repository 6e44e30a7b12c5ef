"""Each unit's state in the broker's Redis, beside the run row in the store: queued (no
key yet), running (with the run id and how many trials it plans), complete, failed (with
why: a unit that failed before its run existed has only this). `fleet status` reads it."""
from __future__ import annotations

import json
import time

PREFIX = "virtbench:unit:"
KEEP_S = 30 * 24 * 3600          # a month: long enough to read a fleet's status afterwards


def key(fleet_id: str, host: str) -> str:
    return f"{PREFIX}{fleet_id}:{host}"


def set_state(client, fleet_id: str, host: str, state: str, **fields) -> None:
    k = key(fleet_id, host)
    values = {"state": state, "updated": time.time(), **fields}
    client.hset(k, mapping={name: json.dumps(v) for name, v in values.items()})
    client.expire(k, KEEP_S)


def get_state(client, fleet_id: str, host: str) -> dict:
    raw = client.hgetall(key(fleet_id, host))
    return {(k.decode() if isinstance(k, bytes) else k): json.loads(v) for k, v in raw.items()}
