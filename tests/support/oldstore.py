"""Stores at an older schema revision, and what tells whether a command wrote to one: for the
tests that the commands which only read never write (tests/unit/store/test_store_read_only.py,
tests/unit/cli/test_cli_store.py, tests/live/services/test_store_read_only_pg.py).

An older store is made the way a user's store got there: a store at head holding real runs
(historykit.stepped_store: 9 runs of two environments), taken down by the revisions' own
downgrades (Alembic) to the revision asked for; the store before revisions is
tests/fixtures/store/main-cf1ed1d.db (made by virtbench at main cf1ed1d)."""
from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from historykit import stepped_store

from virtbench.foundations.store.upgrade import REVISIONS_DIR, current_revision

PRE_REVISIONS = Path(__file__).resolve().parents[1] / "fixtures" / "store" / "main-cf1ed1d.db"


def revision_of(url: str) -> str | None:
    engine = sa.create_engine(url)
    try:
        return current_revision(engine)
    finally:
        engine.dispose()


def downgraded(url: str, revision: str) -> None:
    """The store at `url` taken down to `revision` by Alembic (the revisions' downgrades)."""
    config = Config()
    config.set_main_option("script_location", str(REVISIONS_DIR))
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, revision)
    engine.dispose()


def store_at(url: str, revision: str) -> list[str]:
    """A store of 9 runs (two environments, a step at the 7th) at `revision`; its run ids,
    newest first."""
    store = stepped_store(url)
    ids = [r["id"] for r in store.list_runs(limit=None)]
    store.engine.dispose()
    downgraded(url, revision)
    assert revision_of(url) == revision
    return ids


def pre_revision_store(path: Path) -> None:
    shutil.copy(PRE_REVISIONS, path)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def leave_in_wal(path: Path, sql: str) -> None:
    """Commit `sql` into the WAL of the SQLite store `path` from a process that then dies
    without closing it: the change is in `path`-wal, not yet in `path` itself (the next
    connection that closes last checkpoints it there, unless it is read-only)."""
    code = ("import os, sqlite3, sys\n"
            "c = sqlite3.connect(sys.argv[1])\n"
            "c.execute(sys.argv[2])\n"
            "c.commit()\n"
            "os._exit(0)\n")
    subprocess.run([sys.executable, "-c", code, str(path), sql], check=True, timeout=60)
    assert Path(f"{path}-wal").stat().st_size > 0
