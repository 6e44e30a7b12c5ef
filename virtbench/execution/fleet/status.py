"""`virtbench fleet status`: per host, queued / running (trials done/total) / complete /
failed, from the store's run rows and the units' states in the broker."""
from __future__ import annotations

import time
from dataclasses import dataclass

from ...foundations.store import Store
from . import state
from .unit import host_run


@dataclass
class HostStatus:
    host: str
    state: str                    # queued, running, interrupted, complete, failed
    run: str | None = None
    done: int | None = None
    total: int | None = None
    failed_trials: int = 0
    error: str | None = None

    @property
    def ended(self) -> bool:
        return self.state in ("complete", "failed")

    def line(self) -> str:
        text = f"{self.host}: {self.state}"
        if self.state == "running" and self.total:
            text += f" ({self.done}/{self.total} trials)"
        if self.run:
            text += f", run {self.run}"
        if self.failed_trials:
            text += f", {self.failed_trials} trial(s) failed"
        if self.error:
            text += f": {self.error}"
        return text


def host_status(store: Store, client, fleet_id: str, host: str) -> HostStatus:
    unit = state.get_state(client, fleet_id, host) if client is not None else {}
    run = host_run(store, fleet_id, host)
    if run is None:
        if unit.get("state") == "failed":
            return HostStatus(host, "failed", error=unit.get("error"))
        return HostStatus(host, "queued")
    if unit.get("state") == "waiting-for-store":
        return HostStatus(host, "waiting for the store", run["id"], error=unit.get("error"))
    done = len(store.done_slots(run["id"]))
    failed = sum(t["status"] != "ok" for t in store.trials(run["id"]))
    total = unit.get("total")
    if run["status"] == "complete":
        return HostStatus(host, "complete", run["id"], done, total, failed)
    st = "running" if run["status"] == "running" else run["status"]
    return HostStatus(host, st, run["id"], done, total, failed)


def fleet_status(store: Store, client, fleet_id: str) -> list[HostStatus]:
    fleet = store.get_fleet(fleet_id)
    return [host_status(store, client, fleet_id, h) for h in fleet["hosts"]]


def wait(store: Store, client, fleet_id: str, say, poll_s: float = 2.0) -> list[HostStatus]:
    """Follow the fleet until every host's run has ended; say() each change of a host. Woken
    by the units' announcements (state.channel), and every poll_s seconds whatever happens."""
    last: dict[str, str] = {}
    sub = client.pubsub(ignore_subscribe_messages=True)
    sub.subscribe(state.channel(fleet_id))
    try:
        while True:
            rows = fleet_status(store, client, fleet_id)
            for r in rows:
                if last.get(r.host) != r.line():
                    last[r.host] = r.line()
                    say(r.line())
            if all(r.ended for r in rows):
                return rows
            deadline = time.monotonic() + poll_s
            while time.monotonic() < deadline and sub.get_message(timeout=poll_s) is None:
                pass
    finally:
        sub.close()
