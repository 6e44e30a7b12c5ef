"""Start a perf recorder disabled and enable it over its control FIFOs, so that a profiled trial
starts only once perf really records.

`perf record -D -1 --control fifo:CTL,ACK` (perf 5.10 and later; `perf kvm stat record` passes
both options on) opens its events disabled, then, in its main loop, reads commands from CTL:
on "enable" it enables them and writes "ack\\n" to ACK. Without this a trial started right
after `perf record` is launched runs while perf is still setting up (synthesizing the target's
threads and maps), which on a slow machine is seconds: the first exits of the trial were never
recorded (measured in a KVM guest nested in a TCG guest: 58 of 2,202 exits recorded).
"""
from __future__ import annotations

import errno
import os
import select
import time
from pathlib import Path
from typing import Callable


class PerfControlError(Exception):
    """perf did not acknowledge "enable": `exited` says whether it had died meanwhile."""

    def __init__(self, message: str, exited: bool):
        super().__init__(message)
        self.exited = exited


def control_args(ctl: Path, ack: Path) -> list[str]:
    """perf record's options for starting disabled and listening on the two FIFOs."""
    return ["-D", "-1", "--control", f"fifo:{ctl},{ack}"]


def make_fifos(ctl: Path, ack: Path) -> None:
    """Fresh FIFOs (mode 0600) at ctl and ack, replacing whatever was there."""
    for p in (ctl, ack):
        p.unlink(missing_ok=True)
        os.mkfifo(p, 0o600)


def enable_recorder(ctl: Path, ack: Path, timeout: float, alive: Callable[[], bool],
           clock: Callable[[], float] = time.monotonic) -> float:
    """Send "enable" once perf has opened CTL and wait for its "ack"; the seconds it took.
    PerfControlError when perf dies first or `timeout` passes."""
    t0 = clock()
    deadline = t0 + timeout
    # our end of ACK first, read-write (Linux): with a writer always there, select() waits for
    # perf's answer instead of seeing end-of-file before perf has opened the FIFO
    ack_fd = os.open(ack, os.O_RDWR | os.O_NONBLOCK)
    try:
        ctl_fd = None
        while ctl_fd is None:
            try:
                ctl_fd = os.open(ctl, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                if exc.errno != errno.ENXIO:        # ENXIO: no reader yet (perf not there yet)
                    raise
                _wait_or_fail(alive, deadline, clock, "open its control FIFO")
                time.sleep(0.05)
        try:
            os.write(ctl_fd, b"enable\n")
        finally:
            os.close(ctl_fd)
        got = b""
        while b"ack\n" not in got:
            ready, _, _ = select.select([ack_fd], [], [], 0.1)
            if ready:
                got += os.read(ack_fd, 64)
            else:
                _wait_or_fail(alive, deadline, clock, "acknowledge enable")
        return clock() - t0
    finally:
        os.close(ack_fd)


def _wait_or_fail(alive: Callable[[], bool], deadline: float, clock, what: str) -> None:
    if not alive():
        raise PerfControlError(f"perf exited before it would {what}", exited=True)
    if clock() >= deadline:
        raise PerfControlError(f"perf did not {what} in time", exited=False)
