"""Twins of a qemu guest: a fresh guest of its spec that a boot measurement, a snapshot or a
migration works on while the measured guest itself is paused (when it can be), so that the
twin runs on the machine as a measured guest would. The twin is stopped and the guest resumed
after, whatever happened."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator


@contextmanager
def twin_running(env, twin) -> Iterator:
    """`twin` (made, not started) started while `env` is paused; stopped, and `env` resumed,
    when the block ends."""
    paused = False
    try:
        if env.capabilities().pause and not env.paused:
            env.pause()
            paused = True
        twin.start()
        yield twin
    finally:
        try:
            twin.stop()
        finally:
            if paused:
                env.resume()


def state_twin(make_twin, params: dict, extra_argv: list[str] | tuple = ()):
    """The twin a snapshot or a migration moves the state of: `make_twin`'s guest at the
    memory size asked (params["mem"], when given), its root disk an overlay file a second
    QEMU can open (shared_root)."""
    options = {"mem": params["mem"]} if params.get("mem") else {}
    twin = make_twin(list(extra_argv), **options)
    twin.shared_root = True
    return twin
