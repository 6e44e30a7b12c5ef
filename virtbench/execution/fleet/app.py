"""The Celery app of a fleet: the broker, one queue per host, and how units are delivered.

A unit runs for hours. Delivery is at-least-once: acks_late (a unit is acknowledged when it
ends, not when it starts), prefetch 1 (a busy worker holds no second unit) and
reject_on_worker_lost (a dead worker's unit goes back). With Redis an unacknowledged message
comes back after the visibility timeout even while its first delivery still runs: that copy
waits in the host's queue (its worker holds one unit at a time), and when it is delivered the
unit's lease and its run row (see unit.py) make it wait for, resume or skip the run — never a
second run. So the timeout only bounds how long a dead host's unit waits: 10 minutes by
default, shorter for tests ($VIRTBENCH_VISIBILITY_TIMEOUT or `worker --visibility-timeout`).
"""
from __future__ import annotations

import os
import re

from ...core.errors import VirtbenchError
from ...core.urls import shown

TASK = "virtbench.unit"
QUEUE_PREFIX = "virtbench.host."          # a queue name, not a module: it stays as it was
DEFAULT_VISIBILITY_TIMEOUT = 600.0
_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def check_host(name: str) -> str:
    if not _HOST.fullmatch(name or ""):   # not .match: its $ lets a final newline in
        raise VirtbenchError(f"host name {name!r}: use letters, digits, '.', '_' or '-' "
                             "(it names the host's queue and prefixes its labels)")
    return name


def queue_name(host: str) -> str:
    return QUEUE_PREFIX + check_host(host)


def check_broker_url(url: str | None) -> str:
    if not url:
        raise VirtbenchError("no broker: give --broker redis://HOST:6379/0 "
                             "(or set $VIRTBENCH_BROKER)")
    if not url.startswith(("redis://", "rediss://")):
        raise VirtbenchError(f"broker {shown(url)}: only Redis is supported; give "
                             "--broker redis://HOST:6379/0")
    return url


def visibility_timeout(value: float | None = None) -> float:
    if value is None:
        value = float(os.environ.get("VIRTBENCH_VISIBILITY_TIMEOUT", DEFAULT_VISIBILITY_TIMEOUT))
    if value <= 0:
        raise VirtbenchError(f"visibility timeout {value:g}: give a number of seconds > 0")
    return value


def make_app(broker: str, visibility: float | None = None):
    """The Celery app for `broker` (no result backend: results live in the store). Sending a
    unit needs only its task name (TASK); the worker that runs units registers it."""
    from celery import Celery

    vt = visibility_timeout(visibility)
    # the sweep that brings unacknowledged messages back runs every `restore` seconds
    restore = max(1, min(10, int(vt / 4)))
    app = Celery("virtbench", broker=check_broker_url(broker), set_as_current=False)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,
        worker_prefetch_multiplier=1,
        worker_concurrency=1,
        worker_hijack_root_logger=False,
        worker_redirect_stdouts=False,
        worker_send_task_events=False,
        task_default_queue=QUEUE_PREFIX + "default",
        task_create_missing_queues=True,
        broker_connection_retry_on_startup=False,
        broker_connection_max_retries=0,
        broker_transport_options={"visibility_timeout": vt,
                                  "unacked_restore_interval": restore,
                                  "unacked_restore_throttle": 1},
        enable_utc=True,
    )
    return app     # the worker registers the unit's task on it (unit.register)
