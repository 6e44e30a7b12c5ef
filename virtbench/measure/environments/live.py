"""Environments that are up: stopped when the process exits and on SIGTERM/SIGHUP.

`Environment.start()` tracks an environment here and its stop() lets it go, so a virtbench
process that ends without the runner's own stop (an exception past it, `kill`) still releases
what it made. SIGKILL cannot be caught: there the guardians (guest/guardian.py) and the next
run's sweep clean up.
"""
from __future__ import annotations

import atexit
import os
import signal
import threading
from typing import Protocol


class Stoppable(Protocol):
    def stop(self) -> None: ...


live: set[Stoppable] = set()
live_lock = threading.Lock()


def track(env: Stoppable) -> None:
    with live_lock:
        live.add(env)


def untrack(env: Stoppable) -> None:
    with live_lock:
        live.discard(env)


def stop_all() -> None:
    with live_lock:
        envs = list(live)
    for env in envs:
        try:
            env.stop()
        except Exception:
            pass


atexit.register(stop_all)


def _on_signal(signum, frame):  # SIGTERM/SIGHUP: clean up, then die as the signal would
    stop_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def install_signal_handlers() -> None:
    """From the main thread only, and only over the default handlers (a caller's own stay)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) in (signal.SIG_DFL, None):
            signal.signal(sig, _on_signal)
