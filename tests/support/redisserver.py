"""A real redis-server for the fleet tests: Debian's binary on 127.0.0.1 at a free port, in
its own directory, no persistence; stopped by its PID, nothing left behind."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

BINARY = "redis-server"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    def __init__(self, password: str | None = None):
        self.password = password
        self.dir = Path(tempfile.mkdtemp(prefix="vb-redis-"))
        self.port = free_port()
        self.log = self.dir / "redis.log"
        self.proc = subprocess.Popen(
            [shutil.which(BINARY) or BINARY, "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--dir", str(self.dir),
             "--logfile", str(self.log),
             *(["--requirepass", password] if password else [])],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 10
        while not self.ping():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not start: {self.log_text()}")
            time.sleep(0.05)

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                if self.password:
                    s.sendall(f"AUTH {self.password}\r\n".encode())
                    if not s.recv(16).startswith(b"+OK"):
                        return False
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def log_text(self) -> str:
        return self.log.read_text() if self.log.exists() else "(no log)"

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def redis_available() -> bool:
    return shutil.which(BINARY) is not None


@pytest.fixture
def redis_server():
    if not redis_available():
        pytest.skip("redis-server is not installed (scripts/setup.sh --all installs it)")
    server = RedisServer()
    try:
        yield server
    finally:
        server.stop()
