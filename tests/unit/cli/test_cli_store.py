"""The store as the command line treats it (issue 37): the commands that only read never write
it (a store of another revision is refused in one line naming `virtbench store upgrade`, and
the file's sha256 is the same after), `virtbench store upgrade` upgrades it after a backup,
`run --resume` never creates a store, and a full disk is said as such."""
from __future__ import annotations

import gc
import os
import sqlite3
import stat

import pytest
from oldstore import leave_in_wal, pre_revision_store, revision_of, sha256, store_at
from starlette.testclient import TestClient

from virtbench.measure import benchmarks
from virtbench.measure.benchmarks.base import Benchmark, Metric
from virtbench.interface.cli import commands as cli
from virtbench.foundations.store import HEAD, Store, backup, connection
from virtbench.interface.web.app import make_app


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    gc.collect()            # what a finished command left open is closed, as at its exit
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def old(tmp_path):
    """A store of 9 runs at revision 0004: (path, url, run ids newest first)."""
    path = tmp_path / "store.db"
    url = f"sqlite:///{path}"
    return path, url, store_at(url, "0004")


def read_commands(ids: list[str]) -> dict[str, list[str]]:
    return {"runs": ["runs"], "report": ["report", ids[0]],
            "compare": ["compare", ids[1], ids[0]], "history": ["history"],
            "serve": ["serve", "--port", "0"]}


@pytest.mark.parametrize("command", ["runs", "report", "compare", "history", "serve"])
def test_a_read_command_refuses_an_older_store_and_leaves_it_as_it_was(capsys, old, command,
                                                                       monkeypatch):
    path, url, ids = old
    before = sha256(path)
    from virtbench.interface.web import serve
    served = []       # serve would serve until Ctrl-C: here it returns at once
    monkeypatch.setattr(serve, "serve", lambda store, *a, **k: served.append(store))
    code, out, err = run_cli(capsys, *read_commands(ids)[command], "--store", url)
    assert (code, out) == (2, "")
    assert err == (f"virtbench: store {url} has schema revision 0004, older than this "
                   f"virtbench's head {HEAD}; commands that only read never upgrade a store: "
                   f"run `virtbench store upgrade --store {url}` (or any `virtbench run` on "
                   "it)\n")
    assert sha256(path) == before and revision_of(url) == "0004" and served == []


def test_fleet_status_refuses_an_older_store_too(capsys, old):
    path, url, _ = old
    before = sha256(path)
    code, _, err = run_cli(capsys, "fleet", "status", "--store", url)
    assert code == 2 and "`virtbench store upgrade --store " in err
    assert len(err.splitlines()) == 1
    assert sha256(path) == before and revision_of(url) == "0004"


def test_a_read_command_refuses_a_store_made_before_revisions(capsys, tmp_path):
    path = tmp_path / "old.db"
    pre_revision_store(path)
    before = sha256(path)
    code, _, err = run_cli(capsys, "report", "--store", str(path))
    assert code == 2 and len(err.splitlines()) == 1
    assert "has no schema revision (made before revisions)" in err
    assert f"`virtbench store upgrade --store sqlite:///{path}`" in err
    assert sha256(path) == before


@pytest.fixture
def head(tmp_path):
    """A store at head of 9 runs whose last commit is still in its -wal (its writer died):
    a connection that may write, closing last, would copy it into the file."""
    path = tmp_path / "store.db"
    url = f"sqlite:///{path}"
    ids = store_at(url, HEAD)
    leave_in_wal(path, f"INSERT INTO warnings (run_id, kind, message) VALUES "
                       f"('{ids[0]}', 'note', 'written last')")
    return path, url, ids


@pytest.mark.parametrize("command", ["runs", "report", "compare", "history"])
def test_a_read_command_leaves_a_store_at_head_as_it_was(capsys, head, command):
    path, url, ids = head
    before = sha256(path)
    code, out, err = run_cli(capsys, *read_commands(ids)[command], "--store", url)
    assert code == 0, err
    assert out
    assert sha256(path) == before


def test_the_web_view_leaves_a_store_at_head_as_it_was(head):
    path, url, ids = head
    before = sha256(path)
    store = Store(url, read_only=True)
    client = TestClient(make_app(store))
    for page in ("/runs", f"/runs/{ids[0]}", "/series", f"/compare?a={ids[1]}&b={ids[0]}"):
        assert client.get(page).status_code == 200, page
    store.engine.dispose()
    assert sha256(path) == before


# -- virtbench store upgrade ------------------------------------------------------------------
def dump(path) -> list[str]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return list(con.iterdump())
    finally:
        con.close()


def backups(path) -> list:
    return sorted(path.parent.glob(f"{path.name}.bak-*"))


def test_store_upgrade_backs_the_store_up_then_upgrades_it(capsys, old):
    path, url, ids = old
    was = dump(path)
    code, out, err = run_cli(capsys, "store", "upgrade", "--store", url)
    assert (code, err) == (0, "")
    [copy] = backups(path)
    assert copy.name.startswith("store.db.bak-0004-") and copy.name.endswith("Z")
    assert out == f"store {url} upgraded from 0004 to {HEAD}; backup at {copy}\n"
    assert dump(copy) == was and revision_of(f"sqlite:///{copy}") == "0004"
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    assert revision_of(url) == HEAD
    code, out, _ = run_cli(capsys, "runs", "--store", url)      # and now it is read
    assert code == 0 and ids[0] in out


def test_store_upgrade_of_a_store_made_before_revisions(capsys, tmp_path):
    path = tmp_path / "old.db"
    pre_revision_store(path)
    was = dump(path)
    code, out, _ = run_cli(capsys, "store", "upgrade", "--store", str(path))
    [copy] = backups(path)
    assert code == 0 and copy.name.startswith("old.db.bak-none-")
    assert out == (f"store sqlite:///{path} upgraded from no revision (a store made before "
                   f"revisions) to {HEAD}; backup at {copy}\n")
    assert dump(copy) == was and revision_of(f"sqlite:///{path}") == HEAD


def test_store_upgrade_at_head_writes_nothing(capsys, head):
    path, url, _ = head
    before = sha256(path)
    code, out, _ = run_cli(capsys, "store", "upgrade", "--store", url)
    assert code == 0
    assert out == f"store {url} is at schema revision {HEAD} already: nothing to do\n"
    assert sha256(path) == before and backups(path) == []


@pytest.mark.parametrize("where", ["nosuch.db", "no/such/dir/store.db"])
def test_store_upgrade_of_a_missing_store_creates_nothing(capsys, tmp_path, where):
    code, out, err = run_cli(capsys, "store", "upgrade", "--store",
                             f"sqlite:///{tmp_path / where}")
    assert (code, out) == (2, "")
    assert err == (f"virtbench: no store at {tmp_path / where}: nothing to upgrade; check "
                   "--store or $VIRTBENCH_STORE\n")
    assert list(tmp_path.iterdir()) == []


def test_store_upgrade_of_a_file_without_a_store_leaves_it_alone(capsys, tmp_path):
    path = tmp_path / "notes.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE notes (x)")
    con.commit()
    con.close()
    before = sha256(path)
    code, _, err = run_cli(capsys, "store", "upgrade", "--store", str(path))
    assert code == 2 and f"no store at {path}: nothing to upgrade" in err
    assert sha256(path) == before and backups(path) == []


def test_store_upgrade_refuses_a_newer_store(capsys, tmp_path):
    path = tmp_path / "store.db"
    Store(str(path)).engine.dispose()
    con = sqlite3.connect(path)
    con.execute("UPDATE alembic_version SET version_num = '0099'")
    con.commit()
    con.close()
    before = sha256(path)
    code, _, err = run_cli(capsys, "store", "upgrade", "--store", str(path))
    assert code == 2 and "schema revision 0099, newer than this virtbench knows" in err
    assert sha256(path) == before and backups(path) == []


def test_a_backup_never_overwrites_one_of_the_same_second(capsys, old, monkeypatch):
    path, url, _ = old
    from datetime import datetime, timezone
    when = datetime(2026, 12, 1, 2, 3, 4, tzinfo=timezone.utc)

    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return when
    monkeypatch.setattr(backup, "datetime", Frozen)
    taken = path.with_name("store.db.bak-0004-20261201T020304Z")
    taken.write_text("someone else's")
    code, out, _ = run_cli(capsys, "store", "upgrade", "--store", url)
    assert code == 0 and out.endswith(f"backup at {taken}.1\n")
    assert taken.read_text() == "someone else's"


def test_a_backup_that_cannot_be_made_upgrades_nothing(capsys, old, monkeypatch):
    path, url, _ = old
    monkeypatch.setattr(backup, "_TRIES", 1)
    before = sha256(path)

    def taken(store, revision, when, n=0):
        return path.with_name("taken")
    monkeypatch.setattr(backup, "backup_name", taken)
    path.with_name("taken").write_text("x")
    code, out, err = run_cli(capsys, "store", "upgrade", "--store", url)
    assert (code, out) == (2, "")
    assert "backups of this second exist already" in err and "nothing was upgraded" in err
    assert sha256(path) == before and revision_of(url) == "0004"


# -- run --resume, --dry-run ------------------------------------------------------------------
@pytest.mark.parametrize("extra", [[], ["--dry-run"], ["--retry-failed"]])
def test_resuming_in_a_store_that_does_not_exist_creates_nothing(capsys, tmp_path, extra):
    where = tmp_path / "dir" / "new.db"
    code, out, err = run_cli(capsys, "run", "--resume", "nosuch", *extra,
                             "--store", f"sqlite:///{where}")
    assert (code, out) == (2, "") and len(err.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_a_dry_run_of_a_resume_touches_no_store(capsys, head):
    path, url, ids = head
    before = sha256(path)
    code, out, err = run_cli(capsys, "run", "--resume", ids[0], "--dry-run", "--store", url)
    assert (code, out) == (2, "")
    assert "--dry-run prints a new run's plan and touches no store" in err
    assert sha256(path) == before


# -- a full disk ----------------------------------------------------------------------------
class Echo(Benchmark):
    """Prints one number (and `pad` bytes of padding, to make its run's study large)."""

    name = "echo"
    family = "test"
    metrics = (Metric("value", "x", True),)
    defaults = {"pad": "", "out": 0}

    def argv(self, params, env):
        return ["sh", "-c", f"head -c {int(params['out'])} /dev/zero | tr '\\0' x; echo; "
                            "echo '{\"value\": 1}'"]

    def parse(self, stdout):
        from virtbench.measure.benchmarks.base import last_json_line, number
        return {"value": number(last_json_line(stdout), "value")}


def full_after(monkeypatch, pages: int | None) -> None:
    """Every SQLite connection opened from now on may grow its file by `pages` pages (None:
    not past 1 page): SQLite's own "database or disk is full" once it would."""
    real = connection.sqlite_pragmas

    def pragmas(dbapi_conn, record):
        real(dbapi_conn, record)
        size = dbapi_conn.execute("PRAGMA page_count").fetchone()[0]
        dbapi_conn.execute(f"PRAGMA max_page_count = {1 if pages is None else size + pages}")
    monkeypatch.setattr(connection, "sqlite_pragmas", pragmas)


def test_a_full_disk_before_the_run_is_said_so_not_went_away(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(benchmarks.REGISTRY, "echo", Echo())
    url = f"sqlite:///{tmp_path / 'store.db'}"
    Store(url).engine.dispose()
    full_after(monkeypatch, 0)
    code, out, err = run_cli(capsys, "run", "--env", "native", "--bench",
                             f"echo:pad={'p' * 8000}", "--trials", "1", "--no-progress",
                             "--store", url)
    assert (code, out) == (2, "")
    assert err == (f"virtbench: store {url}: the disk it is on is full (database or disk is "
                   "full); free space and run again\n")
    monkeypatch.undo()
    assert Store(url, read_only=True).list_runs() == []


def test_a_new_store_on_a_full_disk_is_said_so(capsys, tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    full_after(monkeypatch, None)
    code, _, err = run_cli(capsys, "run", "--env", "native", "--bench", "pi", "--trials", "1",
                           "--no-progress", "--store", url)
    assert code == 2
    assert err.startswith(f"virtbench: store {url}: the disk it is on is full (") and \
        len(err.splitlines()) == 1


def test_a_disk_full_mid_run_ends_it_resumable_with_what_was_kept(capsys, tmp_path,
                                                                  monkeypatch):
    """Each trial keeps ~6 KiB of output (2 pages): the disk fills after a few trials; the
    run ends with exit 3 as when the store goes away, every committed trial kept."""
    monkeypatch.setitem(benchmarks.REGISTRY, "echo", Echo())
    url = f"sqlite:///{tmp_path / 'store.db'}"
    Store(url).engine.dispose()
    full_after(monkeypatch, 12)
    code, _, err = run_cli(capsys, "run", "--env", "native", "--bench", "echo:out=6000",
                           "--trials", "12", "--no-progress", "--store", url)
    monkeypatch.undo()
    store = Store(url, read_only=True)
    [run] = store.list_runs()
    kept = len(store.trials(run["id"], include_warmup=True))
    assert code == 3 and 0 < kept < 13
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"virtbench: store {url}: the disk it is on is full (database or "
                           "disk is full) during ")
    assert line.endswith(f"; the {kept} trial(s) already recorded are kept; free space, then "
                         f"resume with `virtbench run --resume {run['id']}`")
    assert os.path.exists(tmp_path / "store.db")
