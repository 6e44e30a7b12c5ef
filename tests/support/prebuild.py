"""What the live tiers need built, built in the background while the tiers before them run.

Some live tests need something that takes minutes to build on a machine that has none cached
(CI): every guest test virtbench's guest image (whose base tree is also what containers run),
the versions tests a guest image with bookworm-backports' kernel and that suite's QEMU, the
sandbox tests gVisor's platform probes (kvm's hangs here until its limit), the nested tier
the host image (the base tree with QEMU and perf, then the level that embeds this tree).
Most of that time is downloads, unpacking and waiting. The live tiers that need none of it
run first (tests/conftest.py: services, host; then guests, nested), and these builds start
at the first live test, in the process that runs the live tiers, one after the other, at the
lowest CPU and I/O priority: they are done by the time their tests ask for them.

`start(config, items)` picks the builds the collected tests need and the cache lacks and
starts them; `wait(name)` is what a test's fixture calls before it builds (then finds the
thing cached), `wait_all()` what a test calls that must not run beside a build (the profiled
TCG run: its plugin's trials lost their agent under a build's extra load); `stop()` ends a
build still going when the session ends (SIGINT, so the builder removes its temporary tree)
and drops the rest; the kernel sends the same SIGINT should pytest itself die
(PR_SET_PDEATHSIG).
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Callable
from pathlib import Path

_PR_SET_PDEATHSIG = 1
BACKPORTS = "bookworm-backports"


def _guest_image_missing() -> bool:
    from virtbench.machinery.image import guest_image as guest
    return guest.cached() is None


def _probes_missing() -> bool:
    from virtbench.measure.environments.gvisor import platform
    return platform.runsc_binary() is not None and platform.cached("kvm") is None


def _host_image_missing() -> bool:
    from virtbench.machinery.image import host_image
    return host_image.cached() is None


def _backports_image_missing() -> bool:
    from virtbench.machinery.image import guest_image as guest
    return guest.cached(BACKPORTS) is None


def _backports_qemu_missing() -> bool:
    from virtbench.machinery.image import qemu_fetch
    return qemu_fetch.cached(BACKPORTS) is None


@dataclass(frozen=True)
class Job:
    name: str
    argv: tuple[str, ...]          # virtbench's arguments
    tests: tuple[str, ...]         # path fragments of the tests that need it
    missing: Callable[[], bool]    # not in the cache yet
    nested: bool = False           # only with --run-nested


# in the order the tiers need them: guests first, nested last (the host image embeds the
# guest image)
JOBS = (Job("guest image", ("image", "build"), ("/live/guests/",), _guest_image_missing),
        # gVisor's platforms probed (kvm's hangs here until its 20 s limit) on the guest
        # image's base tree: `virtbench envs` and the sandbox tests find the answers cached
        Job("probes", ("envs", "--probe"),
            ("/live/host/test_cli_help_live.py", "/live/guests/test_sandbox"), _probes_missing),
        Job("backports image", ("image", "build", "--linux", BACKPORTS),
            ("/live/guests/test_versions_live.py",), _backports_image_missing),
        Job("backports qemu", ("qemu", "fetch", BACKPORTS), ("/live/guests/test_versions_live.py",),
            _backports_qemu_missing),
        Job("host image", ("image", "build", "--variant", "host"), ("/live/nested/",),
            _host_image_missing, nested=True))

_lock = threading.Lock()
_done: dict[str, str] = {}          # job -> how it went
_queued: list[str] = []
_current: subprocess.Popen | None = None
_stopping = False
_thread: threading.Thread | None = None
_decided = False                    # start() has chosen the builds


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGINT)


def wanted(config, items) -> list[Job]:
    """The jobs the collected tests need, as root with QEMU, that the cache lacks."""
    if os.geteuid() != 0:
        return []
    from virtbench.measure.environments.qemu import qemu_binary
    if qemu_binary() is None:
        return []
    paths = [str(item.path) for item in items]
    out = []
    for job in JOBS:
        if job.nested and not config.getoption("--run-nested"):
            continue
        if not any(fragment in p for fragment in job.tests for p in paths):
            continue
        try:
            if job.missing():
                out.append(job)
        except Exception:             # the builder itself will say what is wrong, in the test
            pass
    return out


def _run(jobs: list[Job]) -> None:
    global _current
    for job in jobs:
        with _lock:
            if _stopping:
                return
            fd, log = tempfile.mkstemp(prefix="vb-prebuild-", suffix=".log")
            t0 = time.monotonic()
            _current = subprocess.Popen(
                ["nice", "-n", "19", "ionice", "-c", "2", "-n", "7", sys.executable, "-m",
                 "virtbench", *job.argv], stdin=subprocess.DEVNULL, stdout=fd,
                stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
            os.close(fd)
        code = _current.wait()
        text = Path(log).read_text(errors="replace").strip().splitlines()[-2:]
        Path(log).unlink(missing_ok=True)
        with _lock:
            _done[job.name] = (f"{job.name} built in the background: exit {code} after "
                               f"{time.monotonic() - t0:.0f} s; {' | '.join(text)}")
            _current = None


def start(config, items) -> None:
    """Start the builds the collected tests need and the cache lacks (once: at the first live
    test)."""
    global _thread, _decided
    if _decided:
        return
    # once: deciding reads the caches (the host image's recipe hashes virtbench's source
    # tree), not again at every live test when nothing was missing
    _decided = True
    jobs = wanted(config, items)
    if not jobs:
        return
    _queued.extend(j.name for j in jobs)
    _thread = threading.Thread(target=_run, args=(jobs,), name="prebuild", daemon=True)
    _thread.start()


def wait(name: str, limit_s: float = 1800.0) -> str | None:
    """Wait for the background build `name`; a line saying how it went (None if it was not
    started: cached already, or not wanted)."""
    if name not in _queued:
        return None
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        with _lock:
            if name in _done:
                return _done[name] + f" (waited {time.monotonic() - t0:.0f} s)"
        if _thread is None or not _thread.is_alive():
            return f"{name}: the background builds ended before it"
        time.sleep(0.5)
    return f"{name}: still building after {limit_s:.0f} s; the test builds it itself"


def wait_all(limit_s: float = 1800.0) -> list[str]:
    """Wait for every background build; a line for each that was started (none if none)."""
    return [said for name in list(_queued) if (said := wait(name, limit_s))]


def stop() -> None:
    global _stopping
    with _lock:
        _stopping = True
        proc = _current
    if proc is not None and proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if _thread is not None:
        _thread.join(timeout=5)
