"""Commands benchmarks run on the host side (ping from a namespace, scp, a server for a
network test, the device facts of a guest's backing file), through one executor object.

What the agent is for the environment side, `HostExecutor` is for the host side: one `run`
(argv, a time limit, optional stdin -> exit, stdout, stderr, duration; a time limit reached
or a missing program is a result, never an exception) and one `popen` for a server that
must run while the environment's client measures. Benchmarks reach it as `env.host`, so a
test substitutes a fake that records argv and answers with captured output.
Environment-internal commands (QEMU, namespaces) do not go through it.
"""
from __future__ import annotations

import ctypes
import signal
import subprocess
import time

from ..agent.transport import ExecResult

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:  # runs in the child between fork and exec
    """Have the kernel SIGKILL this child when the thread that started it dies (virtbench
    killed with SIGKILL included): a server or recorder never outlives its run."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except Exception:
        pass


def _text(data) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data


class HostExecutor:
    """Runs commands on the machine running virtbench."""

    def run(self, argv: list[str], timeout: float, input: str | None = None) -> ExecResult:
        """Run `argv` to completion, killed after `timeout` seconds (timed_out=True, exit
        -9, whatever it printed until then); a program that is not there is exit 127."""
        t0 = time.monotonic()
        try:
            proc = subprocess.run(argv, input=input, capture_output=True, text=True,
                                  timeout=timeout, stdin=None if input is not None
                                  else subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            return ExecResult(exit=-9, stdout=_text(exc.stdout), stderr=_text(exc.stderr),
                              wall_s=time.monotonic() - t0, timed_out=True)
        except FileNotFoundError:
            return ExecResult(exit=127, stdout="", wall_s=time.monotonic() - t0,
                              stderr=f"{argv[0]}: not found on this host; install it here")
        return ExecResult(exit=proc.returncode, stdout=proc.stdout, stderr=proc.stderr,
                          wall_s=time.monotonic() - t0)

    def popen(self, argv: list[str], **kwargs) -> subprocess.Popen:
        """Start a long-running host process (a server); the caller stops it by its PID.
        Started in a session of its own, so a terminal's Ctrl-C reaches virtbench first, and
        killed by the kernel if virtbench dies first (nothing records its PID elsewhere)."""
        kwargs.setdefault("start_new_session", True)
        kwargs.setdefault("preexec_fn", die_with_parent)
        return subprocess.Popen(argv, **kwargs)

    def stop(self, handle: subprocess.Popen, timeout: float,
             sig: int = signal.SIGINT) -> ExecResult:
        """Stop a process popen() started: `sig` to it (SIGINT lets a recorder such as perf
        write its file), SIGKILL after `timeout` s; its exit and what it printed, if piped."""
        t0 = time.monotonic()
        if handle.poll() is None:
            try:
                handle.send_signal(sig)
            except ProcessLookupError:
                pass
        try:
            out, err = handle.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            handle.kill()
            out, err = handle.communicate()
            timed_out = True
        return ExecResult(exit=handle.returncode, stdout=_text(out), stderr=_text(err),
                          wall_s=time.monotonic() - t0, timed_out=timed_out)


LOCAL = HostExecutor()
