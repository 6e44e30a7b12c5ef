"""A minimal QMP client (pause, resume, quit, query-cpus-fast)."""
from __future__ import annotations

import json
import socket
from pathlib import Path

from ...errors import AgentError


class Qmp:
    """A minimal QMP client: one command at a time, events skipped."""

    def __init__(self, path: Path, timeout: float = 10):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(path))
        self.file = self.sock.makefile("rwb", buffering=0)
        self._read()  # greeting
        self.command("qmp_capabilities")

    def _read(self) -> dict:
        line = self.file.readline()
        if not line:
            raise AgentError("QMP connection closed")
        return json.loads(line)

    def command(self, name: str, **args) -> dict:
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.file.write((json.dumps(msg) + "\n").encode())
        while True:
            reply = self._read()
            if "return" in reply:
                return reply["return"]
            if "error" in reply:
                raise AgentError(f"QMP {name}: {reply['error'].get('desc')}")

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
