"""Reaching the broker: a Redis client for a URL, or one line saying why not and what to do."""
from __future__ import annotations

from ...core.errors import VirtbenchError
from ...core.urls import scrub, shown
from .app import check_broker_url


def redis_client(url: str, timeout: float = 3.0):
    import redis

    check_broker_url(url)
    client = redis.Redis.from_url(url, socket_connect_timeout=timeout,
                                  socket_timeout=max(timeout, 10.0))
    try:
        client.ping()
    except redis.RedisError as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise VirtbenchError(f"broker {shown(url)}: unreachable ({scrub(first, url)}); start "
                             "redis-server there "
                             "or fix --broker") from None
    return client
