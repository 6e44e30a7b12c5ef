"""The host side of the agent protocol: newline-delimited JSON over a byte stream.

The request and the reply are the same for every environment; only the stream differs
(a subprocess's pipes for `native`, a virtio-serial socket for a QEMU guest, ...).
"""
from __future__ import annotations

import base64
import itertools
import json
import os
import select
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import AgentError, AgentSilent

AGENT_SOURCE = Path(__file__).with_name("program.py")


@dataclass
class ExecResult:
    """What the agent reports for one command."""

    exit: int
    stdout: str
    stderr: str
    wall_s: float
    user_s: float = 0.0
    sys_s: float = 0.0
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.exit == 0 and not self.timed_out


PARTIAL_TAIL = 64 * 1024   # characters of each stream kept of a command whose agent is lost
SILENT = "no sign of life"  # exec(alive=N): what an AgentError says of an agent silent N s


class _Tail:
    """The last PARTIAL_TAIL characters of what was added."""

    def __init__(self):
        self.parts: list[str] = []
        self.size = 0

    def add(self, text: str) -> None:
        if not text:
            return
        self.parts.append(text)
        self.size += len(text)
        while self.size - len(self.parts[0]) >= PARTIAL_TAIL:
            self.size -= len(self.parts.pop(0))

    def text(self) -> str:
        return "".join(self.parts)[-PARTIAL_TAIL:]


class AgentClient:
    """Speaks the agent protocol over a readable and a writable file descriptor."""

    def __init__(self, read_fd: int, write_fd: int, name: str = "agent"):
        self._rfd = read_fd
        self._wfd = write_fd
        self._buf = b""
        self._ids = itertools.count(1)
        self.name = name

    # -- framing -------------------------------------------------------------------------
    def _send(self, obj: dict) -> None:
        data = (json.dumps(obj, ensure_ascii=True) + "\n").encode("ascii")
        view = memoryview(data)
        while view:
            try:
                n = os.write(self._wfd, view)
            except (BrokenPipeError, ConnectionError) as exc:
                raise AgentError(f"{self.name}: connection lost ({exc})") from exc
            view = view[n:]

    def _readline(self, deadline: float | None, idle: float | None = None) -> bytes:
        """The next line, by `deadline` and with no more than `idle` s between two reads."""
        while b"\n" not in self._buf:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if remaining is not None and remaining == 0.0:
                raise AgentError(f"{self.name}: no answer in time")
            wait = remaining if idle is None else min(idle, remaining or idle)
            ready, _, _ = select.select([self._rfd], [], [], wait)
            if not ready:
                if remaining is None or wait < remaining:
                    raise AgentSilent(f"{self.name}: {SILENT} for {idle:g} s")
                raise AgentError(f"{self.name}: no answer in time")
            try:
                chunk = os.read(self._rfd, 1 << 20)
            except ConnectionError as exc:
                raise AgentError(f"{self.name}: connection lost ({exc})") from exc
            if not chunk:
                raise AgentError(f"{self.name}: connection closed")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line

    def request(self, op: str, wait: float | None = None, on_event=None,
                idle: float | None = None, **fields) -> dict:
        """Send one request and wait up to `wait` s for its reply (other ids are dropped);
        events for it before the reply (exec's streamed output) go to `on_event`. With `idle`,
        a silence of `idle` s from the agent ends the wait too (see exec's `alive`)."""
        rid = next(self._ids)
        self._send({"id": rid, "op": op, **fields})
        deadline = None if wait is None else time.monotonic() + wait
        while True:
            line = self._readline(deadline, idle).strip()
            if not line.startswith(b"{"):
                continue  # noise on a serial line (a console message, say)
            try:
                reply = json.loads(line)
            except ValueError:
                continue
            if reply.get("id") != rid:
                continue
            if "event" in reply:
                if on_event is not None:
                    on_event(reply)
                continue
            if not reply.get("ok"):
                raise AgentError(f"{self.name}: {op} failed: {reply.get('error')}")
            return reply

    # -- operations ----------------------------------------------------------------------
    def ping(self, timeout: float = 10.0) -> dict:
        return self.request("ping", wait=timeout)

    def exec(self, argv: list[str], timeout: float, env: dict | None = None,
             cwd: str | None = None, stdin: str = "", alive: float | None = None) -> ExecResult:
        """Run `argv` there. The agent streams the output while the command runs; if it is
        lost before it answers, the AgentError carries the tail of what arrived (`stdout`,
        `stderr`: the last PARTIAL_TAIL characters of each). With `alive` (s), the agent
        also says it is alive a few times per `alive` s while the command is silent, and a
        silence of `alive` s is an AgentSilent saying so (SILENT): the machine stopped, not
        the command (an agent without heartbeats is silent while its command is)."""
        arrived = {"stdout": _Tail(), "stderr": _Tail()}

        def on_event(event: dict) -> None:
            if event.get("event") != "output":
                return
            skipped = event.get("skipped") or {}
            for key, tail in arrived.items():
                if skipped.get(key):
                    tail.add(f"\n[... {skipped[key]} bytes not streamed ...]\n")
                tail.add(event.get(key) or "")
        # The agent enforces `timeout` on the command; give the reply a margin beyond it.
        try:
            beat = {} if alive is None else {"heartbeat": max(1.0, alive / 4)}
            reply = self.request("exec", wait=timeout + 30, on_event=on_event, idle=alive,
                                 argv=argv, env=env or {}, timeout=timeout, cwd=cwd,
                                 stdin=stdin, stream=True, **beat)
        except AgentError as exc:
            exc.stdout, exc.stderr = arrived["stdout"].text(), arrived["stderr"].text()
            raise
        return ExecResult(exit=reply["exit"], stdout=reply["stdout"], stderr=reply["stderr"],
                          wall_s=reply["wall_s"], user_s=reply.get("user_s", 0.0),
                          sys_s=reply.get("sys_s", 0.0), timed_out=reply.get("timed_out", False))

    def put(self, path: str, data: bytes, mode: int = 0o644, timeout: float = 120) -> None:
        self.request("put", wait=timeout, path=path, mode=mode,
                     data_b64=base64.b64encode(data).decode("ascii"))

    def get(self, path: str, timeout: float = 120) -> bytes:
        return base64.b64decode(self.request("get", wait=timeout, path=path)["data_b64"])

    def shutdown(self, timeout: float = 5.0) -> None:
        try:
            self.request("shutdown", wait=timeout)
        except AgentError:
            pass


class SubprocessAgent(AgentClient):
    """The agent as a child process talking over its stdin/stdout (the `native` transport)."""

    def __init__(self, argv: list[str] | None = None, name: str = "agent", **popen):
        argv = argv or ["python3", str(AGENT_SOURCE), "--stdio"]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, **popen)
        super().__init__(self.proc.stdout.fileno(), self.proc.stdin.fileno(), name=name)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.shutdown()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream:
                stream.close()


class SocketAgent(AgentClient):
    """The agent behind a Unix socket (QEMU's chardev for a virtio-serial or serial port)."""

    def __init__(self, path: str | os.PathLike, name: str = "agent", connect_timeout: float = 10):
        deadline = time.monotonic() + connect_timeout
        while True:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                self.sock.connect(os.fspath(path))
                break
            except (FileNotFoundError, ConnectionRefusedError):
                self.sock.close()
                if time.monotonic() > deadline:
                    raise AgentError(f"{name}: cannot connect to {path}")
                time.sleep(0.05)
        fd = self.sock.fileno()
        super().__init__(fd, fd, name=name)

    def close(self) -> None:
        self.sock.close()
