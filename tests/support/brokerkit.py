"""A stand-in for the Redis client the fleet holds (redis.Redis), in memory: the commands
virtbench/execution/fleet uses and nothing else, for unit tests that need no redis-server.

Values come back as bytes, as redis-py gives them. Keys expire on `clock` (time.monotonic
unless a test gives its own). The two Lua scripts of lease.py are carried out as Redis would
(renew or release a key only while its value is the caller's); any other script is refused,
so a new script fails its test here until this fake learns it. The tests of the scripts
themselves against a real server stay in tests/live/services/test_fleet_parts.py."""
from __future__ import annotations

import json
import threading
import time

from virtbench.execution.fleet import lease


def _b(value) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


class FakePubSub:
    def __init__(self, broker: "FakeRedis"):
        self.broker, self.channels, self.messages = broker, set(), []
        self.closed = False

    def subscribe(self, channel: str) -> None:
        self.channels.add(channel)
        self.broker.subscribers.append(self)

    def get_message(self, timeout: float = 0.0):
        if self.messages:
            return self.messages.pop(0)
        time.sleep(min(timeout, 0.01))
        return None

    def close(self) -> None:
        self.closed = True


class FakePipeline:
    def __init__(self, broker: "FakeRedis"):
        self.broker, self.calls = broker, []

    def __getattr__(self, name):
        return lambda *args, **kwargs: self.calls.append((name, args, kwargs))

    def execute(self) -> list:
        return [getattr(self.broker, name)(*args, **kwargs) for name, args, kwargs in self.calls]


class FakeRedis:
    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.values: dict[str, bytes] = {}
        self.hashes: dict[str, dict[bytes, bytes]] = {}
        self.expires: dict[str, float] = {}
        self.published: list[tuple[str, str]] = []
        self.subscribers: list[FakePubSub] = []
        self.fail_eval: Exception | None = None      # the broker away for a moment
        self.lock = threading.Lock()

    # -- keys -------------------------------------------------------------------------------
    def _alive(self, key: str) -> bool:
        if key in self.expires and self.clock() >= self.expires[key]:
            self.values.pop(key, None)
            self.hashes.pop(key, None)
            del self.expires[key]
        return key in self.values or key in self.hashes

    def set(self, key: str, value, nx: bool = False, px: int | None = None):
        with self.lock:
            if nx and self._alive(key):
                return None
            self.values[key] = _b(value)
            self.expires.pop(key, None)
            if px is not None:
                self.expires[key] = self.clock() + px / 1000
            return True

    def get(self, key: str):
        with self.lock:
            return self.values.get(key) if self._alive(key) else None

    def mget(self, keys: list[str]) -> list:
        return [self.get(k) for k in keys]

    def delete(self, key: str) -> int:
        with self.lock:
            found = self._alive(key)
            self.values.pop(key, None)
            self.hashes.pop(key, None)
            self.expires.pop(key, None)
            return int(found)

    def pexpire(self, key: str, ms: int) -> int:
        with self.lock:
            if not self._alive(key):
                return 0
            self.expires[key] = self.clock() + ms / 1000
            return 1

    def expire(self, key: str, seconds: int) -> int:
        return self.pexpire(key, seconds * 1000)

    def ttl(self, key: str) -> float | None:
        return self.expires[key] - self.clock() if key in self.expires else None

    # -- lease.py's scripts -----------------------------------------------------------------
    def eval(self, script: str, numkeys: int, key: str, holder, *args):
        if self.fail_eval is not None:
            raise self.fail_eval
        if script not in (lease._RENEW, lease._RELEASE):
            raise NotImplementedError("brokerkit.FakeRedis knows lease.py's two scripts only")
        if self.get(key) != _b(holder):
            return 0
        return self.pexpire(key, int(args[0])) if script == lease._RENEW else self.delete(key)

    # -- hashes, publish/subscribe ----------------------------------------------------------
    def hset(self, key: str, mapping: dict) -> int:
        with self.lock:
            self._alive(key)
            self.hashes.setdefault(key, {}).update({_b(k): _b(v) for k, v in mapping.items()})
            return len(mapping)

    def hgetall(self, key: str) -> dict:
        with self.lock:
            return dict(self.hashes.get(key, {})) if self._alive(key) else {}

    def publish(self, channel: str, message: str) -> int:
        self.published.append((channel, message))
        listening = [s for s in self.subscribers if channel in s.channels and not s.closed]
        for s in listening:
            s.messages.append({"type": "message", "channel": channel, "data": _b(message)})
        return len(listening)

    def pipeline(self) -> FakePipeline:
        return FakePipeline(self)

    def pubsub(self, ignore_subscribe_messages: bool = False) -> FakePubSub:
        return FakePubSub(self)

    # -- for the tests ----------------------------------------------------------------------
    def fields(self, key: str) -> dict:
        """A unit's state hash as set_state wrote it: {field: value}, JSON read back."""
        return {k.decode(): json.loads(v) for k, v in self.hgetall(key).items()}
