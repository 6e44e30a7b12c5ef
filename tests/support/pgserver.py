"""A real PostgreSQL server for the tests: Debian's `postgresql` binaries, `initdb` in a temporary
directory, `pg_ctl start` on a Unix socket only (no TCP port), stopped at the end of the session.

    from pgserver import pg_server, pg_url   # in a conftest.py or a test module

`pg_server` (session) is a PgServer: url_for(dbname) creates a fresh database and returns its
SQLAlchemy URL; stop()/start() stop and start the server on the same data (a store that goes
away and comes back). `pg_url` (function) is the URL of a fresh, empty database.

No leftovers, even if pytest dies (SIGKILL included): a watchdog process, in its own session,
holds the read end of a pipe whose write end only pytest holds; when pytest exits by any means
the pipe closes and the watchdog stops the server (pg_ctl, then the postmaster's PID) and
removes the directory. A normal end of session does the same itself first.
"""
from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

SETUP_HINT = "PostgreSQL is not installed here: run scripts/setup.sh --all (Debian's postgresql package)"


def find_bindir() -> Path | None:
    """Debian's PostgreSQL binaries, 15 first (bookworm), else the newest installed."""
    env = os.environ.get("VIRTBENCH_PG_BINDIR")
    candidates = [env] if env else []
    candidates += ["/usr/lib/postgresql/15/bin"]
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for c in candidates:
        if c and Path(c, "initdb").is_file() and Path(c, "pg_ctl").is_file():
            return Path(c)
    return None


def _free_port() -> int:
    # with listen_addresses='' the port only names the socket file; a free TCP port keeps it
    # unique anyway should someone enable TCP
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# the watchdog: waits for EOF on stdin (pytest gone), then stops the server and removes the dir
_WATCHDOG = r"""
import os, shutil, signal, subprocess, sys, time
pg_ctl, data, root, user = sys.argv[1:5]
sys.stdin.buffer.read()
def as_user(cmd):
    return (["runuser", "-u", user, "--"] + cmd) if user else cmd
if os.path.exists(os.path.join(data, "postmaster.pid")):
    subprocess.run(as_user([pg_ctl, "stop", "-D", data, "-m", "immediate", "-w", "-t", "10"]),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    pid = int(open(os.path.join(data, "postmaster.pid")).readline())
    os.kill(pid, signal.SIGKILL)
except (OSError, ValueError):
    pass
shutil.rmtree(root, ignore_errors=True)
"""


class PgServer:
    """One PostgreSQL cluster in a temporary directory, reachable on a Unix socket."""

    def __init__(self, bindir: Path):
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="vb-pg-"))
        self.data = self.root / "data"
        self.sockdir = self.root / "sock"
        self.sockdir.mkdir()
        self.port = _free_port()
        self.log = self.root / "server.log"
        # initdb refuses root: run the server as Debian's postgres user when we are root
        self.user = "postgres" if os.geteuid() == 0 else ""
        if self.user:
            shutil.chown(self.root, self.user)
            shutil.chown(self.sockdir, self.user)
        self._dbs = 0
        self.watchdog = subprocess.Popen(
            [sys.executable, "-c", _WATCHDOG, str(bindir / "pg_ctl"), str(self.data),
             str(self.root), self.user], stdin=subprocess.PIPE, start_new_session=True)
        self._initdb()

    def _as_user(self, cmd: list[str]) -> list[str]:
        return (["runuser", "-u", self.user, "--"] + cmd) if self.user else cmd

    def _initdb(self) -> None:
        out = subprocess.run(self._as_user(
            [str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres",
             "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]),
            capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise RuntimeError(f"initdb failed: {out.stderr.strip()}")

    @property
    def pid(self) -> int | None:
        try:
            return int((self.data / "postmaster.pid").read_text().splitlines()[0])
        except (OSError, ValueError, IndexError):
            return None

    def start(self) -> None:
        opts = (f"-k {self.sockdir} -c listen_addresses='' -p {self.port} "
                "-c fsync=off -c full_page_writes=off -c max_connections=100")
        out = subprocess.run(self._as_user(
            [str(self.bindir / "pg_ctl"), "start", "-D", str(self.data), "-l", str(self.log),
             "-w", "-t", "60", "-o", opts]), capture_output=True, text=True, timeout=90)
        if out.returncode != 0:
            log = self.log.read_text()[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {out.stderr.strip()} {log}")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (clients are disconnected); the data stay for start()."""
        pid = self.pid
        if pid is None:
            return
        subprocess.run(self._as_user(
            [str(self.bindir / "pg_ctl"), "stop", "-D", str(self.data), "-m", mode, "-w",
             "-t", "30"]), capture_output=True, timeout=60)
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)

    def close(self) -> None:
        """Stop the server and remove everything; the watchdog then exits."""
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)
        if self.watchdog.poll() is None:
            self.watchdog.stdin.close()
            try:
                self.watchdog.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.watchdog.kill()

    def url_for(self, dbname: str | None = None) -> str:
        """A fresh database (created here) and its SQLAlchemy URL."""
        import psycopg

        self._dbs += 1
        dbname = dbname or f"db{self._dbs}"
        with psycopg.connect(host=str(self.sockdir), port=self.port, user="postgres",
                             dbname="postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{dbname}"')
            conn.execute(f'CREATE DATABASE "{dbname}"')
        return self.url(dbname)

    def url(self, dbname: str) -> str:
        return f"postgresql+psycopg://postgres@/{dbname}?host={self.sockdir}&port={self.port}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child of ours counts as gone
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def skip_reason() -> str | None:
    """Why a PostgreSQL test cannot run here (None when it can)."""
    if find_bindir() is None:
        return SETUP_HINT
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed: run scripts/setup.sh --all (pip install -e '.[test]')"
    return None


@pytest.fixture(scope="session")
def pg_server():
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    server = PgServer(find_bindir())
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture
def pg_url(pg_server):
    """A fresh, empty database on the session's server."""
    return pg_server.url_for()


@pytest.fixture(name="store_url", params=["sqlite", "postgresql"])
def store_url_on_both(request, tmp_path, monkeypatch):
    """A fresh store on SQLite, then on PostgreSQL (also set as $VIRTBENCH_STORE for
    subprocesses). A test module takes it instead of conftest's SQLite-only store_url with
    `from pgserver import store_url_on_both  # noqa: F401`."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'store.db'}"
    else:
        url = request.getfixturevalue("pg_url")
    monkeypatch.setenv("VIRTBENCH_STORE", url)
    return url
