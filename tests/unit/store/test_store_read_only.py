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
