"""What else the host was doing during a trial: steal time and run-queue length from
/proc/stat, and the CPU time the measured threads got (/proc/PID/task/TID/stat).

Pure parsers (`parse_stat`, `parse_task_stat`) and the arithmetic over two readings are
tested on real captured files (tests/fixtures/proc). `LoadSampler` is the side effect: it
reads /proc/stat when a trial starts and ends, and samples procs_running every SAMPLE_S
in between on a thread of its own (a read of /proc/stat costs some microseconds). The CPU
time of a guest's vCPU threads is read from the host at both ends.

Steal is the time the hypervisor under this host gave its CPUs to someone else (this
development machine is itself a VM); procs_running counts runnable tasks, the sampler's
own read and the benchmark included.
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

SAMPLE_S = 0.1
PROC = "/proc"
# /proc/stat's cpu columns, in order (proc(5)); guest and guest_nice are already counted in
# user and nice, so the total leaves them out
CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


@dataclass(frozen=True)
class StatReading:
    """One read of /proc/stat: the aggregate cpu line's ticks, per-CPU lines, procs_running."""
    cpu: dict[str, int]
    cpus: dict[int, dict[str, int]]
    procs_running: int | None
    procs_blocked: int | None


def parse_stat(text: str) -> StatReading:
    """/proc/stat -> StatReading. ValueError when it has no aggregate cpu line."""
    cpu: dict[str, int] | None = None
    cpus: dict[int, dict[str, int]] = {}
    running = blocked = None
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        head = parts[0]
        if head.startswith("cpu"):
            ticks = dict(zip(CPU_FIELDS, (int(x) for x in parts[1:1 + len(CPU_FIELDS)])))
            for name in CPU_FIELDS:
                ticks.setdefault(name, 0)      # old kernels lack the last columns
            if head == "cpu":
                cpu = ticks
            elif head[3:].isdigit():
                cpus[int(head[3:])] = ticks
        elif head == "procs_running" and len(parts) > 1:
            running = int(parts[1])
        elif head == "procs_blocked" and len(parts) > 1:
            blocked = int(parts[1])
    if cpu is None:
        raise ValueError("no aggregate cpu line in /proc/stat")
    return StatReading(cpu, cpus, running, blocked)


def steal_pct(before: StatReading, after: StatReading) -> float | None:
    """Share of all CPUs' time between the readings that went to steal, in %; None when no
    tick passed."""
    d = {k: after.cpu[k] - before.cpu[k] for k in CPU_FIELDS}
    total = sum(d.values())
    return None if total <= 0 else 100.0 * d["steal"] / total


def parse_task_stat(text: str) -> tuple[int, int]:
    """/proc/PID[/task/TID]/stat -> (utime, stime) in clock ticks. The comm field is in
    parentheses and may hold spaces and parentheses itself: split after the last ')'."""
    end = text.rindex(")")
    rest = text[end + 2:].split()
    # rest[0] is field 3 (state); utime and stime are fields 14 and 15
    return int(rest[11]), int(rest[12])


def task_cpu_s(pid: int, tid: int | None = None, proc: str = PROC) -> float | None:
    """CPU seconds (user + system) a thread (or a process's main thread) has used; None
    when it is gone."""
    path = f"{proc}/{pid}/task/{tid}/stat" if tid is not None else f"{proc}/{pid}/stat"
    try:
        with open(path) as f:
            u, s = parse_task_stat(f.read())
    except (OSError, ValueError, IndexError):
        return None
    return (u + s) / os.sysconf("SC_CLK_TCK")


def threads_cpu_s(tids: list[int], proc: str = PROC) -> float | None:
    """Sum of the CPU seconds of threads given by id (a guest's vCPU threads); None when
    any is gone. /proc/TID/stat of a thread that does not lead its process is the whole
    process's: the thread's own is /proc/TID/task/TID/stat."""
    total = 0.0
    for tid in tids:
        used = task_cpu_s(tid, tid, proc=proc)
        if used is None:
            return None
        total += used
    return total


def read_stat(proc: str = PROC) -> StatReading | None:
    try:
        with open(f"{proc}/stat") as f:
            return parse_stat(f.read())
    except (OSError, ValueError):
        return None


@dataclass
class Load:
    """What the host did during one trial."""
    wall_s: float
    steal_pct: float | None = None
    run_queue_mean: float | None = None
    run_queue_max: int | None = None
    samples: int = 0
    threads_cpu_s: float | None = None      # CPU time of the measured threads (a guest's vCPUs)
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {"wall_s": round(self.wall_s, 6), "samples": self.samples}
        for key in ("steal_pct", "run_queue_mean", "threads_cpu_s"):
            value = getattr(self, key)
            if value is not None:
                out[key] = round(value, 4)
        if self.run_queue_max is not None:
            out["run_queue_max"] = self.run_queue_max
        return {**out, **self.extra}


class LoadSampler:
    """with LoadSampler(threads) as s: ... ; s.load is the trial's Load. `threads`: ids of
    the threads whose CPU time to measure (a guest's vCPU threads), or none."""

    def __init__(self, threads: list[int] | None = None, every_s: float = SAMPLE_S,
                 proc: str = PROC):
        self.threads = list(threads or [])
        self.every_s = every_s
        self.proc = proc
        self.load: Load | None = None
        self._running: list[int] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        while not self._stop.wait(self.every_s):
            reading = read_stat(self.proc)
            if reading is not None and reading.procs_running is not None:
                self._running.append(reading.procs_running)

    def __enter__(self) -> "LoadSampler":
        self._before = read_stat(self.proc)
        self._cpu0 = threads_cpu_s(self.threads, self.proc) if self.threads else None
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._sample, name="virtbench-load",
                                        daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        wall = time.monotonic() - self._t0
        cpu1 = threads_cpu_s(self.threads, self.proc) if self.threads else None
        after = read_stat(self.proc)
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        load = Load(wall_s=wall, samples=len(self._running))
        if self._before is not None and after is not None:
            load.steal_pct = steal_pct(self._before, after)
        if self._running:
            load.run_queue_mean = sum(self._running) / len(self._running)
            load.run_queue_max = max(self._running)
        if self._cpu0 is not None and cpu1 is not None:
            load.threads_cpu_s = cpu1 - self._cpu0
        self.load = load
