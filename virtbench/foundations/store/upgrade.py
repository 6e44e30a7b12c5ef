"""Opening a store at the head schema revision.

Every store carries its revision in Alembic's `alembic_version` table. Opening one to write
(`run`, `worker`, `fleet`; `virtbench store upgrade` does it explicitly: upgrade_store):
- at head (the common case: every command opens the store): one SELECT, nothing else;
- empty: the tables of schema.py are created and stamped head, in one transaction;
- made by a virtbench older than revisions (tables, no alembic_version): the columns added
  before revisions existed are added, missing tables created, stamped 0001, then upgraded;
- at an older revision: Alembic upgrades it to head (revisions/versions);
- at a revision this code does not know (a newer virtbench wrote it): a one-line error,
  nothing written.
Opening one only to read (runs, report, compare, history, serve, fleet status): at head it is
read; at any other revision it is refused in one line (check_readable), never upgraded.
Creation and upgrades hold a lock (PostgreSQL: an advisory lock; SQLite: BEGIN IMMEDIATE) so
that two processes opening one new store at once create it once.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from ...core.errors import VirtbenchError
from .backup import sqlite_backup
from .connection import make_engine, normalize_url, open_error, shown_url, sqlite_path
from .schema import metadata

# every revision in revisions/versions, oldest first (tests check the two agree)
REVISIONS = ("0001", "0002", "0003", "0004", "0005", "0006")
HEAD = REVISIONS[-1]
REVISIONS_DIR = Path(__file__).resolve().parent / "revisions"

# columns added to tables before the store had revisions (all part of revision 0001):
# (table, column, DDL type+default per dialect)
LEGACY_COLUMNS = [
    ("trials", "warmup", {"sqlite": "BOOLEAN NOT NULL DEFAULT 0",
                          "postgresql": "BOOLEAN NOT NULL DEFAULT false"}),
    ("trials", "boot", {"sqlite": "INTEGER", "postgresql": "INTEGER"}),
]

_PG_LOCK_KEY = 0x76626D67   # "vbmg": pg_advisory_xact_lock key of virtbench's schema upgrades


class StoreTooNew(VirtbenchError):
    """The store has a schema revision this virtbench does not know (exit 2)."""


def open_schema(engine: sa.Engine, url: str) -> None:
    """Bring the store behind `engine` to HEAD (see the module's docstring)."""
    revision = current_revision(engine)
    if revision == HEAD:
        return
    _check_known(revision, url)
    with _locked(engine) as conn:
        revision = _read_revision(conn)        # someone may have done it while we waited
        if revision == HEAD:
            return
        if revision is None and not sa.inspect(conn).has_table("runs"):
            metadata.create_all(conn)
            _stamp(conn, HEAD)
            return
        _migrate(conn, revision, url)


def _migrate(conn: sa.Connection, revision: str | None, url: str) -> None:
    """Upgrade the store of `conn` (holding the lock) from `revision` (None: made before
    revisions) to HEAD."""
    _check_known(revision, url)
    if revision is None:
        add_legacy_columns(conn)
        metadata.create_all(conn, tables=[t for t in metadata.sorted_tables
                                          if t.name in _TABLES_0001])
        _stamp(conn, "0001")
    _alembic_upgrade(conn)


class StoreTooOld(VirtbenchError):
    """A command that only reads met a store of an older revision (exit 2): it never
    upgrades one; `virtbench store upgrade` does."""


def check_readable(revision: str | None, url: str) -> None:
    """What a command that only reads can read: a store at HEAD. Its queries select columns
    that later revisions added (runs.detail in 0005, runs.series in 0006, samples' metric
    identity in 0004), so an older store is refused in one line naming `virtbench store
    upgrade`, and a newer one as always (StoreTooNew)."""
    if revision == HEAD:
        return
    _check_known(revision, url)
    was = f"schema revision {revision}" if revision else "no schema revision (made before revisions)"
    raise StoreTooOld(f"store {url} has {was}, older than this virtbench's head {HEAD}; "
                      "commands that only read never upgrade a store: run `virtbench store "
                      f"upgrade --store {url}` (or any `virtbench run` on it)")


@dataclass(frozen=True)
class Upgraded:
    """What `virtbench store upgrade` did: the store (as shown), the revision it found (None:
    made before revisions), HEAD, the backup it took (SQLite) and the store's dialect."""

    shown: str
    before: str | None
    after: str
    backup: Path | None
    dialect: str

    @property
    def changed(self) -> bool:
        return self.before != self.after


def upgrade_store(url: str | None) -> Upgraded:
    """`virtbench store upgrade`: bring the store at `url` to HEAD. A missing store is one
    line and nothing is created; at HEAD nothing is written; a SQLite file is first backed
    up beside it (backup.py) under the lock the upgrade then holds; PostgreSQL has no file
    to copy (the caller says so)."""
    url = normalize_url(url)
    shown = shown_url(url)
    path = sqlite_path(url)
    if path is not None and not path.is_file():
        raise _nothing_to_upgrade(str(path))
    try:
        before, dialect = _look(url, shown, path)
        if before == HEAD:
            return Upgraded(shown, HEAD, HEAD, None, dialect)
        engine = make_engine(url, wal=False)    # the journal mode is changed by no one here
        try:
            with _locked(engine) as conn:
                before = _read_revision(conn)   # someone may have done it while we waited
                if before == HEAD:
                    return Upgraded(shown, HEAD, HEAD, None, dialect)
                _check_known(before, shown)
                backup = sqlite_backup(path, before, shown) if path is not None else None
                _migrate(conn, before, shown)
        finally:
            engine.dispose()
    except (sa.exc.SQLAlchemyError, ImportError) as exc:
        raise open_error(exc, shown) from None
    return Upgraded(shown, before, HEAD, backup, dialect)


def _look(url: str, shown: str, path: Path | None) -> tuple[str | None, str]:
    """The store's revision and dialect, read through a read-only engine; a store that does
    not exist (no tables of virtbench's) is one line."""
    engine = make_engine(url, read_only=True)
    try:
        revision = current_revision(engine)
        if revision is None and not sa.inspect(engine).has_table("runs"):
            raise _nothing_to_upgrade(str(path) if path is not None else shown)
        _check_known(revision, shown)
        return revision, engine.dialect.name
    finally:
        engine.dispose()


def _nothing_to_upgrade(where: str) -> VirtbenchError:
    return VirtbenchError(f"no store at {where}: nothing to upgrade; check --store or "
                          "$VIRTBENCH_STORE")


def current_revision(engine: sa.Engine) -> str | None:
    """The store's revision; None when it has none (empty, or older than revisions)."""
    with engine.connect() as conn:
        return _read_revision(conn)


def _read_revision(conn: sa.Connection, retry: bool = True) -> str | None:
    nested = conn.in_transaction()      # under the lock: a savepoint keeps the transaction
    try:
        with conn.begin_nested() if nested else _nothing():
            rows = conn.execute(sa.text("SELECT version_num FROM alembic_version")).all()
    except sa.exc.DBAPIError:
        if not nested:
            conn.rollback()
        if sa.inspect(conn).has_table("alembic_version"):
            if retry and not nested:    # another opener created it between the two looks
                return _read_revision(conn, retry=False)
            raise
        return None
    versions = sorted(r[0] for r in rows)
    if not versions:
        return None
    return versions[0] if len(versions) == 1 else ",".join(versions)


def _check_known(revision: str | None, url: str) -> None:
    if revision is not None and revision not in REVISIONS:
        raise StoreTooNew(f"store {url} has schema revision {revision}, newer than this "
                          f"virtbench knows (head {HEAD}); upgrade virtbench")


def add_legacy_columns(bind) -> list[str]:
    """Add the columns of LEGACY_COLUMNS a store made by an older virtbench lacks; returns
    those it added ("table.column"). `bind`: an Engine or a Connection in a transaction."""
    if isinstance(bind, sa.Engine):
        with bind.begin() as conn:
            return add_legacy_columns(conn)
    added = []
    inspector = sa.inspect(bind)
    dialect = bind.dialect.name
    for table, column, ddl in LEGACY_COLUMNS:
        if not inspector.has_table(table):
            continue
        if column in {c["name"] for c in inspector.get_columns(table)}:
            continue
        bind.execute(sa.text(f"ALTER TABLE {table} ADD COLUMN {column} "
                             f"{ddl.get(dialect, ddl['postgresql'])}"))
        added.append(f"{table}.{column}")
    return added


# the tables of revision 0001 (fleets came with 0002)
_TABLES_0001 = ("runs", "environments", "trials", "superseded_trials", "boots", "profiles",
                "samples", "warnings")


def _stamp(conn: sa.Connection, revision: str) -> None:
    """Alembic's version table (as Alembic makes it) holding `revision`."""
    conn.execute(sa.text("CREATE TABLE IF NOT EXISTS alembic_version (version_num VARCHAR(32) "
                         "NOT NULL, CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))"))
    conn.execute(sa.text("DELETE FROM alembic_version"))
    conn.execute(sa.text("INSERT INTO alembic_version (version_num) VALUES (:v)"),
                 {"v": revision})


def _alembic_upgrade(conn: sa.Connection) -> None:
    """Alembic's upgrade to head on `conn`, inside the caller's transaction."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(REVISIONS_DIR))
    config.attributes["connection"] = conn
    command.upgrade(config, "head")


@contextmanager
def _locked(engine: sa.Engine):
    """A connection in a transaction that no other opener of this store holds at once."""
    if engine.dialect.name == "postgresql":
        with engine.begin() as conn:
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
            yield conn
        return
    if engine.dialect.name == "sqlite":
        # pysqlite begins lazily; take the write lock first (waits for the busy timeout)
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
            dbapi = conn.connection.dbapi_connection
            try:
                yield conn
            except BaseException:
                if dbapi.in_transaction:
                    conn.exec_driver_sql("ROLLBACK")
                raise
            if dbapi.in_transaction:
                conn.exec_driver_sql("COMMIT")
        return
    with engine.begin() as conn:
        yield conn


@contextmanager
def _nothing():
    yield
