"""A fake host executor for benchmarks' host-side commands: it records every argv and answers
from the test's rules, so a benchmark's host side runs without pinging, copying or serving."""
from __future__ import annotations

from typing import Callable

from virtbench.machinery.host.executor import HostExecutor
from virtbench.machinery.agent.transport import ExecResult


def ok(stdout: str = "", stderr: str = "", exit: int = 0) -> ExecResult:
    return ExecResult(exit=exit, stdout=stdout, stderr=stderr, wall_s=0.01)


class FakeProc:
    """What HostServer reads of a Popen: it runs until terminated."""

    pid = 424242
    stderr = None

    def __init__(self):
        self.returncode = None

    def poll(self):
        return self.returncode

    def terminate(self):
        self.returncode = -15

    def kill(self):
        self.returncode = -9

    def wait(self, timeout=None):
        return self.returncode


class FakeHost(HostExecutor):
    """`answer(argv)` -> an ExecResult (or stdout text); every call is kept in `runs`
    (argv, timeout, input) and every started server in `started` (argv, its FakeProc)."""

    def __init__(self, answer: Callable[[list[str]], ExecResult | str]):
        self.answer = answer
        self.runs: list[tuple[list[str], float, str | None]] = []
        self.started: list[tuple[list[str], FakeProc]] = []

    def run(self, argv, timeout, input=None):
        self.runs.append((list(argv), timeout, input))
        result = self.answer(list(argv))
        return ok(result) if isinstance(result, str) else result

    def popen(self, argv, **kwargs):
        proc = FakeProc()
        self.started.append((list(argv), proc))
        return proc
