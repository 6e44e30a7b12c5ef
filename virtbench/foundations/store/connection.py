"""How a store is reached: its URL (default, normalised, shown without its password, the
SQLite file behind it), what its SQLite connections are set to (foreign keys, a busy
timeout, WAL), and the store going away mid-command (StoreUnavailable, exit 3: every public
method of the Store is guarded)."""
from __future__ import annotations

import functools
import os
import sqlite3
import time
from pathlib import Path

import platformdirs
import sqlalchemy as sa

from ...core.errors import VirtbenchError
from ...core.urls import shown


def default_url() -> str:
    env = os.environ.get("VIRTBENCH_STORE")
    if env:
        return env
    return "sqlite:///" + str(Path(platformdirs.user_data_dir("virtbench")) / "virtbench.db")


def normalize_url(url: str | None) -> str:
    url = url or default_url()
    if "://" not in url:          # a bare path means a SQLite file
        url = "sqlite:///" + str(Path(url).resolve())
    # postgresql:// (and postgres://) mean the psycopg 3 driver, the one virtbench installs;
    # SQLAlchemy's own default would be psycopg2
    for bare in ("postgresql://", "postgres://"):
        if url.startswith(bare):
            url = "postgresql+psycopg://" + url[len(bare):]
    return url


def shown_url(url: str) -> str:
    """The URL with its password (if any) masked, for messages (one rule for every URL)."""
    return shown(url)


def no_store(where: str) -> VirtbenchError:
    return VirtbenchError(f"no store at {where}: run `virtbench run` first or pass --store")


class StoreUnavailable(VirtbenchError):
    """The store stopped answering (PostgreSQL stopped, the network gone, SQLite locked past
    its busy timeout). Exit 3: what was committed is kept, the run can be resumed."""

    exit_code = 3

    def __init__(self, url: str, reason: str, doing: str):
        self.url, self.reason, self.doing = url, reason, doing
        super().__init__(f"store {url} went away during {doing} ({reason}); once it is "
                         "back, run the command again")

    def resumable(self, run_id: str, doing: str, recorded: int) -> "StoreUnavailable":
        """The same loss said for a run: what it was doing, what is kept, how to go on."""
        exc = StoreUnavailable(self.url, self.reason, doing)
        exc.args = (f"store {self.url} went away during {doing} ({self.reason}); the "
                    f"{recorded} trial(s) already recorded are kept; once it is back, resume "
                    f"with `virtbench run --resume {run_id}`",)
        return exc


def _gone(exc: Exception) -> bool:
    """A lost or refused connection, not a bug in a statement."""
    return isinstance(exc, (sa.exc.OperationalError, sa.exc.InterfaceError)) or \
        (isinstance(exc, sa.exc.DBAPIError) and exc.connection_invalidated)


def guarded(method):
    """A Store method whose lost or refused connection is StoreUnavailable (one line,
    exit 3), any other database error left as it is (a bug to see)."""
    @functools.wraps(method)
    def call(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except sa.exc.DBAPIError as exc:
            if not _gone(exc):
                raise
            reason = str(exc.orig if exc.orig is not None else exc).strip().splitlines()
            raise StoreUnavailable(self.shown, reason[0] if reason else type(exc).__name__,
                                   f"Store.{method.__name__}()") from None
    return call


def sqlite_path(url: str) -> Path | None:
    """The file of a `sqlite:///PATH` URL; None for other URLs and in-memory databases."""
    if not url.startswith("sqlite:///"):
        return None
    path = url[len("sqlite:///"):].split("?", 1)[0]
    return Path(path) if path and path != ":memory:" else None


SQLITE_BUSY_MS = 60_000   # two runs writing one file wait for each other's commit


def sqlite_pragmas(dbapi_conn, _record):
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    # two runs writing one file wait for each other's commit (up to a minute) rather than fail
    cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_MS}")
    _wal(cur)   # a reader (report) never blocks a running study
    cur.close()


def sqlite_read_pragmas(dbapi_conn, _record):
    """A reader's: the busy timeout, no change of journal mode (a store virtbench made is
    already in WAL mode; switching would write to a file it only reads)."""
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_MS}")
    cur.close()


def _wal(cur) -> None:
    """Put the file in WAL mode (persistent: once is enough). Switching takes a lock that
    SQLite does not wait for (no busy handler), so openers of one new file racing each
    other retry, within the busy timeout, instead of failing with "database is locked"."""
    deadline = time.monotonic() + SQLITE_BUSY_MS / 1000
    while True:     # (an in-memory database answers "memory" and stays so: that is fine)
        try:
            cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


