"""A minimal QMP client (pause, resume, quit, query-cpus-fast; a file descriptor passed
with getfd for a migration to or from a file)."""
from __future__ import annotations

import array
import json
import socket
from pathlib import Path

from .....core.errors import AgentError


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

    def command(self, name: str, fd: int | None = None, **args) -> dict:
        """Run `name`; `fd`: a file descriptor sent with it (SCM_RIGHTS: getfd takes it)."""
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        data = (json.dumps(msg) + "\n").encode()
        if fd is None:
            self.file.write(data)
        else:
            self.sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                        array.array("i", [fd]))])
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
