"""The host image built in the background while the other tiers run.

The nested tier needs the host image (tests/live/nested/conftest.py). Built when that tier
starts, it costs minutes of the suite on a machine that has none cached (CI: the base tree
with QEMU and perf, then the level that embeds this tree), during which nothing else runs.
Most of that time is downloads and unpacking, and the guest tier that runs before it keeps
one of the two cores busy: started at the session's start, at the lowest CPU and I/O
priority, the build is done by the time the nested tier asks for it.

`start(config)` starts `virtbench image build --variant host` when the session will run
nested tests and the image for this tree is not cached; `wait()` is what the nested
fixture calls before it builds (then finds the image cached); `stop()` ends a build still
going when the session ends (SIGINT, so the builder removes its temporary tree), and the
kernel sends the same SIGINT should pytest itself die (PR_SET_PDEATHSIG).
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_proc: subprocess.Popen | None = None
_log: Path | None = None
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGINT)


def wanted(config, items) -> bool:
    """Nested tests will run, as root, with QEMU, and this tree's host image is not cached."""
    if not config.getoption("--run-nested") or os.geteuid() != 0:
        return False
    if not any("/live/nested/" in str(item.path) for item in items):
        return False
    from virtbench.environments.qemu import qemu_binary
    from virtbench.image import host as host_image
    if qemu_binary() is None:
        return False
    try:
        return host_image.cached() is None
    except Exception:                 # the builder itself will say what is wrong, in the tier
        return False


def start(config, items) -> None:
    global _proc, _log
    if _proc is not None or not wanted(config, items):
        return
    fd, name = tempfile.mkstemp(prefix="vb-host-image-", suffix=".log")
    _log = Path(name)
    argv = ["nice", "-n", "19", "ionice", "-c", "2", "-n", "7",
            sys.executable, "-m", "virtbench", "image", "build", "--variant", "host"]
    _proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=fd, stderr=subprocess.STDOUT,
                             preexec_fn=_die_with_parent)
    os.close(fd)


def wait(limit_s: float = 1800.0) -> str | None:
    """Wait for a background build; a line saying how it went (None if none was started)."""
    if _proc is None:
        return None
    t0 = time.monotonic()
    try:
        code = _proc.wait(timeout=limit_s)
    except subprocess.TimeoutExpired:
        stop()
        return f"background host image build still going after {limit_s:.0f} s: stopped"
    tail = _log.read_text(errors="replace").strip().splitlines()[-3:] if _log else []
    return (f"background host image build: exit {code}, waited {time.monotonic() - t0:.0f} s"
            f" for it; last lines: {' | '.join(tail)}")


def stop() -> None:
    global _proc
    if _proc is not None and _proc.poll() is None:
        _proc.send_signal(signal.SIGINT)
        try:
            _proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            _proc.kill()
            _proc.wait()
    _proc = None
    if _log is not None:
        _log.unlink(missing_ok=True)
