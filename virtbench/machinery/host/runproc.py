"""The process of a run: what a run records of the process that executes it when it starts
or resumes (the host, the boot, the pid and the process's start time), and the decision that
this process is gone, so that `virtbench runs` shows a run whose process was killed as
`interrupted` (with the command that resumes it) instead of `running` for ever.

The start time is field 22 of /proc/PID/stat, in clock ticks since boot: a pid the kernel
gave to another process since has another start time, so a reused pid is not taken for the
run's process. The boot id (/proc/sys/kernel/random/boot_id) tells a reboot, after which
neither pid nor start time mean anything. A run recorded on another host is left `running`:
its process cannot be seen from here. The decision is pure (`process_gone`); reading /proc
is `here()` and `start_time()`, given the /proc to read (a test gives a fake one)."""
from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

PROC = Path("/proc")
BOOT_ID = Path("sys/kernel/random/boot_id")
RUNNING, INTERRUPTED = "running", "interrupted"
DETAIL_KEY = "process"          # the run's detail key this record is stored under


def stat_start_time(stat: str) -> str | None:
    """Field 22 (starttime) of a /proc/PID/stat line, or None if it has none. The command
    name (field 2) is in parentheses and may hold spaces and ')': split after the last one."""
    try:
        return stat.rsplit(")", 1)[1].split()[19]
    except IndexError:
        return None


def start_time(pid: int, proc: Path = PROC) -> str | None:
    """The start time of process `pid`, None if there is no such process."""
    try:
        return stat_start_time((proc / str(pid) / "stat").read_text())
    except OSError:
        return None


def boot_id(proc: Path = PROC) -> str | None:
    try:
        return (proc / BOOT_ID).read_text().strip() or None
    except OSError:
        return None


@dataclass(frozen=True)
class HostNow:
    """What this host is now: its name, its boot, and how to read a pid's start time."""

    host: str
    boot: str | None
    start_of: Callable[[int], str | None]


def here(proc: Path = PROC) -> HostNow:
    return HostNow(socket.gethostname(), boot_id(proc), lambda pid: start_time(pid, proc))


def this_process(proc: Path = PROC) -> dict:
    """The record of the calling process, for the run's detail (under DETAIL_KEY)."""
    pid = os.getpid()
    return {"host": socket.gethostname(), "boot": boot_id(proc), "pid": pid,
            "start": start_time(pid, proc)}


def process_gone(recorded: dict | None, now: HostNow) -> bool:
    """Is the recorded process of a run gone? Only said of one recorded on this host: the
    machine booted since, or its pid is absent, or held by a process started at another
    time. False when nothing was recorded (a run of an older virtbench) or when it was
    recorded on another host (we cannot tell)."""
    if not isinstance(recorded, dict) or recorded.get("host") != now.host:
        return False
    if recorded.get("boot") and now.boot and recorded["boot"] != now.boot:
        return True
    pid, start = recorded.get("pid"), recorded.get("start")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0 or not start:
        return False
    return now.start_of(pid) != start


def shown_status(run: dict, now: HostNow) -> str:
    """The status a list of runs shows: the stored one, except a `running` run whose
    process is gone, which is `interrupted` (it can be resumed)."""
    status = run.get("status")
    if status == RUNNING and process_gone((run.get("detail") or {}).get(DETAIL_KEY), now):
        return INTERRUPTED
    return status


def resume_hint(run_id: str, status: str) -> str:
    """What to type to finish an interrupted run ("" for any other status)."""
    return f"virtbench run --resume {run_id}" if status == INTERRUPTED else ""
