"""A key in Redis kept alive by a heartbeat: the lease of a running unit, and a worker's
presence. While the holder lives a thread renews the key every ttl/3; when it dies the key
expires after ttl, so a redelivered unit waits for a live first delivery and takes over from
a dead one."""
from __future__ import annotations

import os
import socket
import threading
import time
import uuid

DEFAULT_TTL = 60.0
LEASE_PREFIX = "virtbench:lease:"
WORKER_PREFIX = "virtbench:worker:"

# renew or release only a key we still hold
_RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then " \
         "return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then " \
           "return redis.call('del', KEYS[1]) else return 0 end"


def lease_ttl() -> float:
    return float(os.environ.get("VIRTBENCH_LEASE_TTL", DEFAULT_TTL))


def holder_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Heartbeat:
    """`key` held with value `holder` while the heartbeat thread runs."""

    def __init__(self, client, key: str, ttl: float | None = None, holder: str | None = None):
        self.client, self.key = client, key
        self.ttl = ttl if ttl is not None else lease_ttl()
        self.holder = holder or holder_id()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.lost = False

    @property
    def _ms(self) -> int:
        return max(1, int(self.ttl * 1000))

    def try_acquire(self) -> bool:
        """Take the key if nobody holds it (a live holder renews it; a dead one's expires)."""
        if self.client.set(self.key, self.holder, nx=True, px=self._ms):
            self._start()
            return True
        return False

    def hold(self) -> None:
        """Set the key whatever holds it (a worker's presence: the last one started wins)."""
        self.client.set(self.key, self.holder, px=self._ms)
        self._start()

    def wait_acquire(self, poll_s: float = 0.5, on_wait=None) -> None:
        waited = False
        while not self.try_acquire():
            if not waited and on_wait is not None:
                on_wait(self.client.get(self.key))
            waited = True
            time.sleep(poll_s)

    def _start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._beat, name=f"heartbeat {self.key}",
                                        daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                if not self.client.eval(_RENEW, 1, self.key, self.holder, self._ms):
                    self.lost = True      # expired while we were stalled: someone may hold it
            except Exception:             # broker away for a moment: try again next beat
                continue

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        try:
            self.client.eval(_RELEASE, 1, self.key, self.holder)
        except Exception:
            pass                          # it expires by itself


def unit_lease(client, fleet_id: str, host: str, ttl: float | None = None) -> Heartbeat:
    return Heartbeat(client, f"{LEASE_PREFIX}{fleet_id}:{host}", ttl)


def worker_presence(client, host: str, ttl: float = 15.0) -> Heartbeat:
    return Heartbeat(client, WORKER_PREFIX + host, ttl)


def present_workers(client, hosts: list[str]) -> set[str]:
    """The hosts whose worker's presence key is alive."""
    if not hosts:
        return set()
    values = client.mget([WORKER_PREFIX + h for h in hosts])
    return {h for h, v in zip(hosts, values) if v is not None}
