"""A full disk under the store is said as such (issue 37): SQLite's "database or disk is full"
and PostgreSQL's disk_full (SQLSTATE 53100: "could not extend file", "No space left on
device") are StoreFull, one line, never "went away"; any other lost connection still is."""
import sqlite3

import psycopg
import pytest
import sqlalchemy as sa

from virtbench.foundations.store import Store, StoreFull, StoreUnavailable
from virtbench.foundations.store.connection import disk_full


def wrapped(orig: Exception) -> sa.exc.DBAPIError:
    return sa.exc.OperationalError("INSERT INTO runs ...", {}, orig)


FULL = [sqlite3.OperationalError("database or disk is full"),
        psycopg.errors.DiskFull('could not extend file "base/16384/16390": No space left on '
                                'device'),
        psycopg.OperationalError("could not write to file \"pg_wal/xlogtemp.1\": No space "
                                 "left on device")]


@pytest.mark.parametrize("orig", FULL, ids=["sqlite", "pg-disk_full", "pg-enospc"])
def test_what_a_full_disk_says_is_recognised(orig):
    assert disk_full(wrapped(orig)) and disk_full(orig)


def test_a_sqlite_error_is_recognised_by_its_code_too():
    exc = sqlite3.OperationalError("something else")
    exc.sqlite_errorcode = sqlite3.SQLITE_FULL
    assert disk_full(wrapped(exc))


@pytest.mark.parametrize("orig", [sqlite3.OperationalError("database is locked"),
                                  psycopg.OperationalError("connection refused")])
def test_other_errors_are_not_a_full_disk(orig):
    assert not disk_full(wrapped(orig))


def test_a_store_method_on_a_full_disk_is_store_full_exit_2(tmp_path, monkeypatch):
    store = Store(f"sqlite:///{tmp_path / 'store.db'}")
    orig = FULL[1]

    def begin():
        raise wrapped(orig)
    monkeypatch.setattr(store, "engine", type("E", (), {"begin": staticmethod(begin)})())
    with pytest.raises(StoreFull) as exc:
        store.create_run({"name": "t"}, seed=1, quick=True, version="t", host="h")
    assert isinstance(exc.value, StoreUnavailable)      # a run's loop catches it as before
    assert exc.value.exit_code == 2
    assert str(exc.value) == (f"store {store.shown}: the disk it is on is full (could not "
                              'extend file "base/16384/16390": No space left on device); free '
                              "space and run again")
    during = exc.value.resumable("r1", "trial native · pi #3", 4)
    assert during.exit_code == 3
    assert str(during) == (f"store {store.shown}: the disk it is on is full (could not extend "
                           'file "base/16384/16390": No space left on device) during trial '
                           "native · pi #3; the 4 trial(s) already recorded are kept; free "
                           "space, then resume with `virtbench run --resume r1`")
