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


def channel(fleet_id: str) -> str:
    """Where every change of a fleet's units is announced (`fleet run --wait` listens)."""
    return f"virtbench:fleet:{fleet_id}"


def set_state(client, fleet_id: str, host: str, state: str, **fields) -> None:
    k = key(fleet_id, host)
    values = {"state": state, "updated": time.time(), **fields}
    pipe = client.pipeline()
    pipe.hset(k, mapping={name: json.dumps(v) for name, v in values.items()})
    pipe.expire(k, KEEP_S)
    pipe.publish(channel(fleet_id), f"{host} {state}")
    pipe.execute()


def get_state(client, fleet_id: str, host: str) -> dict:
    raw = client.hgetall(key(fleet_id, host))
    return {(k.decode() if isinstance(k, bytes) else k): json.loads(v) for k, v in raw.items()}
