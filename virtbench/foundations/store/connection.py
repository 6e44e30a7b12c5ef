"""How a store is reached: its URL (default, normalised, shown without its password, the
SQLite file behind it), its engine (make_engine: read-write, or read-only for the commands
that only read), what its SQLite connections are set to (foreign keys, a busy timeout, WAL),
the store going away mid-command (StoreUnavailable, exit 3: every public method of the Store
is guarded) and its disk being full (StoreFull)."""
from __future__ import annotations

import functools
import os
import sqlite3
import time
from pathlib import Path
from urllib.parse import quote

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


class StoreFull(StoreUnavailable):
    """The disk the store is on is full (SQLite "database or disk is full", PostgreSQL
    "could not extend file" / "No space left on device"). Before a run has anything in the
    store: one line, exit 2; during a run (resumable()): exit 3, what was committed kept."""

    exit_code = 2

    def __init__(self, url: str, reason: str, doing: str):
        self.url, self.reason, self.doing = url, reason, doing
        VirtbenchError.__init__(self, f"store {url}: the disk it is on is full ({reason}); "
                                "free space and run again")

    def resumable(self, run_id: str, doing: str, recorded: int) -> "StoreFull":
        exc = StoreFull(self.url, self.reason, doing)
        exc.exit_code = 3
        exc.args = (f"store {self.url}: the disk it is on is full ({self.reason}) during "
                    f"{doing}; the {recorded} trial(s) already recorded are kept; free space, "
                    f"then resume with `virtbench run --resume {run_id}`",)
        return exc


# what a full disk says: SQLite's SQLITE_FULL, PostgreSQL's disk_full (SQLSTATE 53100: "could
# not extend file ...", "could not write ...: No space left on device")
_FULL_WORDS = ("database or disk is full", "No space left on device", "could not extend file")


def disk_full(exc: BaseException) -> bool:
    """Whether `exc` (a DBAPI error, wrapped by SQLAlchemy or not) says the disk is full."""
    orig = getattr(exc, "orig", None) or exc
    if getattr(orig, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or \
            getattr(orig, "sqlstate", None) == "53100":
        return True
    return any(words in str(orig) for words in _FULL_WORDS)


def first_line(exc: BaseException) -> str:
    """The first line of what a database error says (its driver's own words)."""
    orig = getattr(exc, "orig", None)
    lines = str(orig if orig is not None else exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def open_error(exc: BaseException, shown: str) -> VirtbenchError:
    """What a store that cannot be opened says (one line): its disk full, or why not."""
    if disk_full(exc):
        return StoreFull(shown, first_line(exc), "opening")
    first = str(exc).strip().splitlines()[0]
    return VirtbenchError(f"store {shown}: cannot open ({first}); check the --store URL or "
                          "$VIRTBENCH_STORE")


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
            if disk_full(exc):
                raise StoreFull(self.shown, first_line(exc),
                                f"Store.{method.__name__}()") from None
            if not _gone(exc):
                raise
            raise StoreUnavailable(self.shown, first_line(exc),
                                   f"Store.{method.__name__}()") from None
    return call


def sqlite_path(url: str) -> Path | None:
    """The file of a `sqlite:///PATH` URL; None for other URLs and in-memory databases."""
    if not url.startswith("sqlite:///"):
        return None
    path = sa.make_url(url).database    # as SQLAlchemy reads it (%-escapes decoded)
    return Path(path) if path and path != ":memory:" else None


SQLITE_BUSY_MS = 60_000   # two runs writing one file wait for each other's commit


def make_engine(url: str, read_only: bool = False, wal: bool = True) -> sa.Engine:
    """The engine of the store at `url` (normalised). `read_only`: nothing can be written
    through it: a SQLite file is opened with mode=ro (SQLite may still make its -wal and -shm
    files beside a WAL-mode file that has none: its shared index, never the store's data; a
    read-only connection never checkpoints into the file), a PostgreSQL session's
    transactions are all READ ONLY. `wal`: a writing engine puts a SQLite file in WAL mode
    (`store upgrade` leaves the mode as it is until its backup is taken)."""
    path = sqlite_path(url)
    target: str | sa.URL = url
    if read_only and path is not None:
        target = sa.make_url(url).set(database="file:" + quote(str(path), safe="/"),
                                      query={**sa.make_url(url).query, "mode": "ro",
                                             "uri": "true"})
    # a long-lived process (a fleet worker) outlives a server restart: test pooled
    # connections before use
    engine = sa.create_engine(target, pool_pre_ping=url.startswith("postgresql"))
    if engine.dialect.name == "sqlite":
        sa.event.listen(engine, "connect",
                        sqlite_pragmas if wal and not read_only else sqlite_read_pragmas)
    elif engine.dialect.name == "postgresql" and read_only:
        sa.event.listen(engine, "connect", _pg_read_only)
    return engine


def _pg_read_only(dbapi_conn, _record):
    """Every transaction of this session READ ONLY: a write is PostgreSQL's own error."""
    cur = dbapi_conn.cursor()
    cur.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    cur.close()
    dbapi_conn.commit()         # a SET inside a transaction rolled back would be undone


def sqlite_pragmas(dbapi_conn, _record):
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    # two runs writing one file wait for each other's commit (up to a minute) rather than fail
    cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_MS}")
    _wal(cur)   # a reader (report) never blocks a running study
    cur.close()


def sqlite_read_pragmas(dbapi_conn, _record):
    """A reader's (and `store upgrade`'s before its backup): the busy timeout, no change of
    journal mode (a store virtbench made is already in WAL mode; switching writes the file)."""
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


