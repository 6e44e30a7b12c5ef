"""`virtbench fleet run`: check everything first (the study as `virtbench run` does, the
broker, the store, a worker on every named host), then write the fleet row and enqueue one
unit per host. Any failed check: one line per failure, exit 2, nothing enqueued or written."""
from __future__ import annotations

import random
from dataclasses import replace
import time

from ...core.errors import VirtbenchError
from ...core.urls import shown
from ..run.runner import prepare
from ...foundations.store import Store
from ...study.design import Study
from . import lease, state
from .app import TASK, check_host, make_app, queue_name
from .connect import redis_client

DEFAULT_WORKER_TIMEOUT = 5.0


def check_hosts(hosts: list[str]) -> list[str]:
    if not hosts:
        raise VirtbenchError("no host: name each host with --host NAME (its worker's --name)")
    for h in hosts:
        check_host(h)
    dup = sorted({h for h in hosts if hosts.count(h) > 1})
    if dup:
        raise VirtbenchError(f"host {dup[0]} named twice: give each --host once")
    return hosts


def served_hosts(app, client, hosts: list[str], timeout: float) -> set[str]:
    """The hosts a worker consumes the queue of: idle workers answer Celery's active_queues;
    a busy one (a unit holds its solo pool) shows by its presence key. Polls until all are
    served or `timeout` passes."""
    wanted = {queue_name(h): h for h in hosts}
    seen: set[str] = set()
    deadline = time.monotonic() + timeout
    while True:
        seen |= lease.present_workers(client, [h for h in hosts if h not in seen])
        if len(seen) == len(hosts):
            return seen
        left = deadline - time.monotonic()
        replies = app.control.inspect(timeout=max(0.2, min(1.0, left))).active_queues() or {}
        for queues in replies.values():
            for q in queues or []:
                if q.get("name") in wanted:
                    seen.add(wanted[q["name"]])
        if len(seen) == len(hosts) or time.monotonic() >= deadline:
            return seen


def fleet_run(study: Study, hosts: list[str], broker: str, store_url: str | None,
              worker_timeout: float = DEFAULT_WORKER_TIMEOUT) -> str:
    """Checks, then the fleet row and one unit per host; returns the fleet id."""
    check_hosts(hosts)
    prepare(study, dry_run=True)       # the study's own errors, as `virtbench run` says them
    problems: list[str] = []
    client = store = None
    try:
        client = redis_client(broker)
    except VirtbenchError as exc:
        problems.append(str(exc))
    try:
        store = Store(store_url)
    except VirtbenchError as exc:
        problems.append(str(exc))
    app = None
    if client is not None:
        app = make_app(broker)
        served = served_hosts(app, client, hosts, worker_timeout)
        for h in hosts:
            if h not in served:
                problems.append(
                    f"host {h}: no worker consumes its queue {queue_name(h)} (waited "
                    f"{worker_timeout:g} s); start `virtbench worker --name {h} --broker "
                    f"{shown(broker)} --store URL` on that host")
    if problems:
        raise VirtbenchError("\nvirtbench: ".join(problems))
    if study.seed is None:    # one trial order for every host
        study = replace(study, seed=random.SystemRandom().randrange(2**31))
    fleet_id = store.create_fleet(study.to_dict(), hosts)
    for h in hosts:
        state.set_state(client, fleet_id, h, "queued", enqueued=time.time())
        app.send_task(TASK, args=[fleet_id, h], queue=queue_name(h))
    return fleet_id
