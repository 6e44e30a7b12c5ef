"""A store opened read-only (runs, report, compare, fleet status) is never created: a missing
file or directory, or a file that holds no store, is one line naming it, and nothing is made."""
import sqlite3

import pytest

from virtbench.core.errors import VirtbenchError
from virtbench.foundations.store import Store


def tree(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("where", ["store.db", "missing/dir/store.db"])
def test_a_missing_sqlite_store_is_one_line_and_nothing_is_created(tmp_path, where):
    before = tree(tmp_path)
    with pytest.raises(VirtbenchError) as err:
        Store(f"sqlite:///{tmp_path / where}", read_only=True)
    assert str(err.value) == (f"no store at {tmp_path / where}: run `virtbench run` first "
                              "or pass --store")
    assert err.value.exit_code == 2
    assert tree(tmp_path) == before


def test_a_bare_path_is_read_only_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(VirtbenchError, match="no store at .*typo.db"):
        Store("typo.db", read_only=True)
    assert tree(tmp_path) == []


def test_an_existing_file_without_a_store_is_left_as_it_is(tmp_path):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE notes (x)")
    con.commit()
    con.close()
    for path in (empty, other):
        size = path.stat().st_size
        with pytest.raises(VirtbenchError, match=f"no store at {path}"):
            Store(f"sqlite:///{path}", read_only=True)
        assert path.stat().st_size == size
    con = sqlite3.connect(other)
    assert [r[0] for r in con.execute("SELECT name FROM sqlite_master")] == ["notes"]
    con.close()


def test_an_existing_store_opens_read_only(tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    run_id = Store(url).create_run({"name": "t"}, seed=1, quick=True, version="t", host="h")
    assert [r["id"] for r in Store(url, read_only=True).list_runs()] == [run_id]


def test_the_writing_open_still_creates_the_store(tmp_path):
    Store(f"sqlite:///{tmp_path / 'new' / 'store.db'}")
    assert (tmp_path / "new" / "store.db").is_file()


# -- never writing, never upgrading (issue 37) -----------------------------------------------
import sqlalchemy as sa  # noqa: E402
from oldstore import leave_in_wal, pre_revision_store, revision_of, sha256, store_at  # noqa: E402

from virtbench.foundations.store import HEAD, StoreTooNew, StoreTooOld  # noqa: E402
from virtbench.foundations.store.schema import runs  # noqa: E402


def _upgrade_line(url: str, was: str) -> str:
    return (f"store {url} has {was}, older than this virtbench's head {HEAD}; commands that "
            f"only read never upgrade a store: run `virtbench store upgrade --store {url}` "
            "(or any `virtbench run` on it)")


@pytest.mark.parametrize("revision", ["0001", "0004", "0005"])
def test_a_store_of_an_older_revision_is_refused_unchanged(tmp_path, revision):
    path = tmp_path / "store.db"
    url = f"sqlite:///{path}"
    store_at(url, revision)
    before = sha256(path)
    with pytest.raises(StoreTooOld) as err:
        Store(url, read_only=True)
    assert str(err.value) == _upgrade_line(url, f"schema revision {revision}")
    assert err.value.exit_code == 2
    assert sha256(path) == before and revision_of(url) == revision


def test_a_store_made_before_revisions_is_refused_unchanged(tmp_path):
    path = tmp_path / "old.db"
    pre_revision_store(path)
    before = sha256(path)
    url = f"sqlite:///{path}"
    with pytest.raises(StoreTooOld) as err:
        Store(url, read_only=True)
    assert str(err.value) == _upgrade_line(url, "no schema revision (made before revisions)")
    assert sha256(path) == before and revision_of(url) is None


def test_a_newer_store_is_still_refused_as_too_new(tmp_path):
    path = tmp_path / "store.db"
    url = f"sqlite:///{path}"
    Store(url).engine.dispose()
    con = sqlite3.connect(path)
    con.execute("UPDATE alembic_version SET version_num = '0099'")
    con.commit()
    con.close()
    before = sha256(path)
    with pytest.raises(StoreTooNew, match="schema revision 0099, newer than this virtbench"):
        Store(url, read_only=True)
    assert sha256(path) == before


def test_closing_a_reader_never_checkpoints_the_wal_into_the_file(tmp_path):
    """A writer died with a commit in the -wal: a reader sees it, and closing (the last
    connection) leaves the store's file as it was (a read-write connection would copy the
    -wal into it there)."""
    path = tmp_path / "store.db"
    url = f"sqlite:///{path}"
    writer = Store(url)
    writer.create_run({"name": "t"}, seed=1, quick=True, version="t", host="h", run_id="first")
    writer.engine.dispose()
    leave_in_wal(path, "INSERT INTO runs (id, study_name, study, seed, quick, status, started) "
                       "VALUES ('second', 't', '{}', 1, 1, 'complete', '2026-01-01 00:00:00')")
    before = sha256(path)
    store = Store(url, read_only=True)
    assert {r["id"] for r in store.list_runs()} == {"first", "second"}
    store.engine.dispose()
    assert sha256(path) == before


def test_nothing_can_be_written_through_a_read_only_store(tmp_path):
    path = tmp_path / "store.db"
    url = f"sqlite:///{path}"
    Store(url).create_run({"name": "t"}, seed=1, quick=True, version="t", host="h")
    store = Store(url, read_only=True)
    before = sha256(path)
    with pytest.raises(sa.exc.OperationalError, match="readonly database"):
        with store.engine.begin() as c:
            c.execute(runs.delete())
    assert len(store.list_runs()) == 1 and sha256(path) == before


def test_a_path_with_uri_characters_opens_read_only(tmp_path):
    """The read-only engine names the file by a URI (file:PATH?mode=ro): a path holding
    '#', '%' or a space is still that file. (In a sqlite:/// URL, as SQLAlchemy reads it,
    %25 is '%' and a '?' ends the path.)"""
    url = f"sqlite:///{tmp_path}/a b#c%25.db"
    Store(url).create_run({"name": "t"}, seed=1, quick=True, version="t", host="h")
    assert len(Store(url, read_only=True).list_runs()) == 1
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".db") == ["a b#c%.db"]


def test_a_run_resumed_in_a_store_that_is_not_there_creates_nothing(tmp_path):
    where = tmp_path / "dir" / "new.db"
    with pytest.raises(VirtbenchError, match=f"no store at {where}"):
        Store(f"sqlite:///{where}", create=False)
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    with pytest.raises(VirtbenchError, match=f"no store at {empty}"):
        Store(f"sqlite:///{empty}", create=False)
    assert tree(tmp_path) == ["empty.db"] and empty.stat().st_size == 0


def test_a_store_that_exists_is_still_upgraded_when_opened_to_write(tmp_path):
    path = tmp_path / "store.db"
    url = f"sqlite:///{path}"
    store_at(url, "0004")
    Store(url, create=False)
    assert revision_of(url) == HEAD
