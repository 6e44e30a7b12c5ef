"""Exit profiles on a KVM host: VM exits by reason (perf kvm stat) and by guest RIP (kvm:kvm_exit).

The parsers live beside this file and are re-exported here:
- kvm_stat.parse_perf_kvm_stat_report / read_perf_kvm_stat_report: `perf kvm stat report`;
- kvm_trace.parse_kvm_exit_lines: kvm_exit/kvm_entry lines of trace_pipe or `perf script`;
- kvm_qmp.parse_query_stats / diff_query_stats: QMP `query-stats` (KVM's own counters).

KvmProfiler is the edge: it builds the perf command lines and runs them through an Executor it is given
(HostCommands over the HostExecutor on this machine; tests pass a fake that replays real outputs), around one profiled
trial of a running QEMU:

    perf kvm stat record -o DIR/kvm-stat.data -D -1 --control fifo:DIR/kvm-stat.ctl,DIR/kvm-stat.ack
                         -p QEMU_PID                                (or -t TID,TID for the vCPU threads)
    perf record -e kvm:kvm_exit -e kvm:kvm_pio -o DIR/kvm-exit.data -D -1 --control fifo:... -p QEMU_PID
                                                                    (guest RIP of every exit, ports)
    both enabled over their control FIFOs, each acknowledged (perf_control.py): only then
    ... the trial ...; both stopped with SIGINT
    perf kvm -i DIR/kvm-stat.data stat report --event=vmexit        (perf 6.1 prints it on stderr)
    perf script -i DIR/kvm-exit.data -F tid,cpu,time,event,trace

and returns an ExitProfile(source="kvm"). Guest addresses are symbolised by the `symbolise(address) -> (function,
caller)` callable given (virtbench/machinery/exits/symbols.py); without it `function` stays None.
"""
from __future__ import annotations

import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

from virtbench.machinery.exits.kvm_qmp import (
    EXIT_COUNTERS,
    counter_notes,
    counter_reason_rows,
    diff_query_stats,
    parse_query_stats,
    query_stats_command,
)
from virtbench.machinery.exits.kvm_stat import (
    KvmProfileError,
    parse_perf_kvm_stat_report,
    read_perf_kvm_stat_report,
)
from virtbench.machinery.exits.kvm_trace import (
    KvmExitTrace,
    Symbolise,
    parse_kvm_exit_lines,
    parse_kvm_pio_lines,
    pio_note,
)
from virtbench.machinery.exits.exit_profile import ExitProfile
from virtbench.machinery.exits.perf_control import PerfControlError, control_args, enable_recorder, make_fifos

INSTALL_PERF = "apt-get install linux-perf"


class Executor(Protocol):
    def run(self, argv: Sequence[str], timeout: float) -> tuple[int, str, str]:
        """Run to completion: (exit status, stdout, stderr). FileNotFoundError if argv[0] is missing."""

    def popen(self, argv: Sequence[str]) -> Any:
        """Start in the background; the handle goes to terminate()."""

    def terminate(self, handle: Any, timeout: float) -> tuple[int, str, str]:
        """SIGINT (perf then writes its file), wait up to `timeout`: (exit status, stdout, stderr)."""

    def enable(self, handle: Any, ctl: Path, ack: Path, timeout: float) -> None:
        """Enable a recorder started with `-D -1 --control fifo:ctl,ack` and wait for its ack;
        PerfControlError if it dies first or `timeout` passes."""


@dataclass
class KvmProfileSession:
    pid: int
    stat_file: Path
    exit_file: Path | None
    started: float                      # when both recorders were enabled
    handles: list[tuple[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class KvmRecording:
    """What a KvmProfiler records and how long it waits: the perf binary, whether exits are
    recorded per guest RIP too (kvm:kvm_exit), how many functions the profile lists, the
    time allowed to stop and read each recorder, and to enable them."""

    perf: str = "perf"
    per_rip: bool = True
    top: int = 20
    timeout: float = 120.0
    start_timeout: float = 120.0


class KvmProfiler:
    def __init__(self, executor: Executor, workdir: Path, *,
                 recording: KvmRecording = KvmRecording(),
                 symbolise: Symbolise | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.executor, self.workdir, self.recording = executor, Path(workdir), recording
        self.perf, self.per_rip, self.top = recording.perf, recording.per_rip, recording.top
        self.timeout, self.start_timeout = recording.timeout, recording.start_timeout
        self.symbolise, self.clock = symbolise, clock

    # --- command lines (pure) ---
    def record_argvs(self, pid: int, tids: Sequence[int] | None = None) -> list[list[str]]:
        target = ["-t", ",".join(str(t) for t in tids)] if tids else ["-p", str(pid)]
        argvs = [[self.perf, "kvm", "stat", "record", "-o", str(self.stat_file),
                  *control_args(*self.fifos("kvm-stat")), *target]]
        if self.per_rip:
            argvs.append([self.perf, "record", "-e", "kvm:kvm_exit", "-e", "kvm:kvm_pio",
                          "-o", str(self.exit_file), *control_args(*self.fifos("kvm-exit")),
                          *target])
        return argvs

    def fifos(self, name: str) -> tuple[Path, Path]:
        """The control and acknowledgement FIFOs of one recorder."""
        return self.workdir / f"{name}.ctl", self.workdir / f"{name}.ack"

    def report_argv(self) -> list[str]:
        return [self.perf, "kvm", "-i", str(self.stat_file), "stat", "report", "--event=vmexit"]

    def script_argv(self) -> list[str]:
        return [self.perf, "script", "-i", str(self.exit_file), "-F", "tid,cpu,time,event,trace"]

    @property
    def stat_file(self) -> Path:
        return self.workdir / "kvm-stat.data"

    @property
    def exit_file(self) -> Path:
        return self.workdir / "kvm-exit.data"

    # --- the edge ---
    def check(self) -> str:
        """perf's version line; KvmProfileError (one line, with the fix) without perf or the tracepoints."""
        code, out, err = self._run([self.perf, "--version"], 30)
        if code != 0 or not out.startswith("perf version"):
            raise KvmProfileError(f"perf does not run ({_first_line(err or out)}): {INSTALL_PERF} "
                                  "(the package for the running kernel)")
        code, listed, err = self._run([self.perf, "list", "kvm:kvm_exit"], 60)
        if "kvm:kvm_exit" not in listed:
            raise KvmProfileError(_NO_TRACEPOINT)
        return out.strip()

    def start(self, pid: int, tids: Sequence[int] | None = None) -> KvmProfileSession:
        """Start the recorders and return once each records (its "enable" acknowledged)."""
        session = KvmProfileSession(pid, self.stat_file, self.exit_file if self.per_rip else None, 0.0)
        names = ["kvm-stat", "kvm-exit"]
        for argv, name in zip(self.record_argvs(pid, tids), names):
            make_fifos(*self.fifos(name))
            try:
                session.handles.append((argv[1], self.executor.popen(argv)))
            except FileNotFoundError:
                self._stop_all(session)
                raise KvmProfileError(f"perf is not installed ({self.perf!r} not found): {INSTALL_PERF}") from None
        for (label, handle), name in zip(list(session.handles), names):
            try:
                self.executor.enable(handle, *self.fifos(name), self.start_timeout)
            except PerfControlError as exc:
                code, out, err = dict(self._stop_all(session)).get(label, (0, "", ""))
                if "unknown tracepoint" in out + err:
                    raise KvmProfileError(_NO_TRACEPOINT) from None
                raise KvmProfileError(
                    f"perf {label} did not start recording: {exc} ({_first_line(err or out)}); "
                    "it needs perf 5.10 or later (-D -1 --control) and root") from None
        # the trial's clock starts when both record
        session.started = self.clock()
        return session

    def stop(self, session: KvmProfileSession, qmp_before: Any = None, qmp_after: Any = None) -> ExitProfile:
        """Stop the recorders, read what they wrote, and return the profile (+ query-stats counters if given)."""
        duration = self.clock() - session.started
        for name, (code, out, err) in self._stop_all(session):
            _recorder_ok(name, code, out + err)
        code, out, err = self._run(self.report_argv(), self.timeout)
        report = read_perf_kvm_stat_report(err + "\n" + out)
        trace, pio = KvmExitTrace(), None
        if session.exit_file is not None:
            code, out, err = self._run(self.script_argv(), self.timeout)
            if code != 0:
                raise KvmProfileError(f"perf script failed ({_first_line(err)}) on {session.exit_file}")
            trace, pio = parse_kvm_exit_lines(out), parse_kvm_pio_lines(out)
        return self.assemble(duration, report, trace, qmp_before, qmp_after, pio)

    def assemble(self, duration: float, report, trace: KvmExitTrace,
                 qmp_before: Any = None, qmp_after: Any = None, pio=None) -> ExitProfile:
        """The ExitProfile from what was read (pure)."""
        notes = report.notes() + pio_note(pio or {})
        delta = diff_query_stats(qmp_before, qmp_after) if qmp_before is not None and qmp_after is not None else {}
        by_reason = list(report.rows) or trace.reason_rows()
        if trace.exits:
            notes.append(f"exits by guest RIP from kvm:kvm_exit: {len(trace.exits)} records")
        if not report.rows and not trace.exits:
            notes.append("no VM exit recorded: kvm:kvm_exit never fired (KVM under PVM does not emit it, "
                         "nor does a guest that did not run)")
            by_reason = counter_reason_rows(delta)
            if by_reason:
                notes.append("exits by reason from KVM's counters (query-stats): io, mmio, halt, irq, "
                             "irq_window, nmi_window, other; no time shares")
        notes.extend(counter_notes(delta))
        return ExitProfile(source="kvm", duration_s=round(duration, 3), by_reason=by_reason,
                       by_function=trace.function_rows(self.symbolise, self.top), notes=notes)

    def _run(self, argv: list[str], timeout: float) -> tuple[int, str, str]:
        try:
            return self.executor.run(argv, timeout)
        except FileNotFoundError:
            raise KvmProfileError(f"perf is not installed ({argv[0]!r} not found): {INSTALL_PERF}") from None

    def _stop_all(self, session: KvmProfileSession) -> list[tuple[str, tuple[int, str, str]]]:
        done = [(name, self.executor.terminate(h, self.timeout)) for name, h in session.handles]
        session.handles.clear()
        return done


_NO_TRACEPOINT = ("this kernel has no kvm:kvm_exit tracepoint (`perf list kvm:kvm_exit` lists nothing): "
                  "load KVM (modprobe kvm_intel or kvm_amd) and mount tracefs on /sys/kernel/tracing")


# perf record, stopped by SIGINT, writes its file then dies of that same signal: -2 from Popen, 130 from a shell.
_STOPPED_OK = (0, -signal.SIGINT, 128 + signal.SIGINT)


def _recorder_ok(name: str, code: int, output: str) -> None:
    if "unknown tracepoint" in output:
        raise KvmProfileError(_NO_TRACEPOINT)
    if code not in _STOPPED_OK:
        raise KvmProfileError(f"perf {name} failed with status {code} ({_first_line(output)}); "
                              "run as root or lower /proc/sys/kernel/perf_event_paranoid")


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "no output")[:120]


class HostCommands:
    """The profiler's Executor over the benchmarks' HostExecutor (`env.host`), so every host
    command of a trial, profiled or not, runs one way and one fake stands for all in tests."""

    def __init__(self, host):
        self.host = host

    def run(self, argv: Sequence[str], timeout: float) -> tuple[int, str, str]:
        r = self.host.run(list(argv), timeout)
        if r.exit == 127 and "not found" in r.stderr:
            raise FileNotFoundError(argv[0])
        return r.exit, r.stdout, r.stderr

    def popen(self, argv: Sequence[str]) -> subprocess.Popen:
        return self.host.popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)

    def terminate(self, handle: subprocess.Popen, timeout: float) -> tuple[int, str, str]:
        """SIGINT (perf record writes its file), SIGKILL after `timeout` s."""
        r = self.host.stop(handle, timeout, signal.SIGINT)
        return r.exit, r.stdout, r.stderr

    def enable(self, handle: subprocess.Popen, ctl: Path, ack: Path, timeout: float) -> None:
        enable_recorder(ctl, ack, timeout, alive=lambda: handle.poll() is None)
