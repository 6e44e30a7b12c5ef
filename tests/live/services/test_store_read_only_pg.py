"""The commands that only read, on a real PostgreSQL (issue 37; tests/support/pgserver.py): a
read-only Store's sessions are READ ONLY, so a write through its engine is PostgreSQL's own
error; a store of an older revision is refused in one line and left at its revision (no
column added); `virtbench store upgrade` upgrades it and says that no backup file was made."""
import pytest
import sqlalchemy as sa
from oldstore import revision_of, store_at

from virtbench.interface.cli import commands as cli
from virtbench.foundations.store import HEAD, Store
from virtbench.foundations.store.schema import runs


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _run_columns(url: str) -> set[str]:
    engine = sa.create_engine(url)
    try:
        return {c["name"] for c in sa.inspect(engine).get_columns("runs")}
    finally:
        engine.dispose()


def test_nothing_can_be_written_through_a_read_only_store(pg_url):
    ids = store_at(pg_url, HEAD)
    store = Store(pg_url, read_only=True)
    with pytest.raises(sa.exc.DBAPIError, match="cannot execute DELETE in a read-only "
                                                "transaction"):
        with store.engine.begin() as c:
            c.execute(runs.delete())
    # not even a statement that commits by itself
    with pytest.raises(sa.exc.DBAPIError, match="cannot execute INSERT in a read-only "
                                                "transaction"):
        with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
            c.execute(runs.insert().values(id="x", study_name="t", study={}, seed=1,
                                           quick=True, status="running",
                                           started=sa.func.now()))
    # a connection taken from the pool again is still read-only; the runs are all there
    assert [r["id"] for r in store.list_runs(limit=None)] == ids
    with pytest.raises(sa.exc.DBAPIError, match="read-only transaction"):
        store.set_run_status(ids[0], "interrupted")
    assert store.get_run(ids[0])["status"] == "complete"
    store.engine.dispose()


@pytest.mark.parametrize("argv", [["runs"], ["history"], ["report"]])
def test_an_older_store_is_refused_and_left_at_its_revision(capsys, pg_url, argv):
    store_at(pg_url, "0004")
    code, out, err = run_cli(capsys, *argv, "--store", pg_url)
    assert (code, out) == (2, "")
    assert err == (f"virtbench: store {pg_url} has schema revision 0004, older than this "
                   f"virtbench's head {HEAD}; commands that only read never upgrade a store: "
                   f"run `virtbench store upgrade --store {pg_url}` (or any `virtbench run` "
                   "on it)\n")
    assert revision_of(pg_url) == "0004"
    assert not {"detail", "series"} & _run_columns(pg_url)


def test_store_upgrade_on_postgresql_says_there_is_no_backup_file(capsys, pg_url):
    ids = store_at(pg_url, "0004")
    code, out, err = run_cli(capsys, "store", "upgrade", "--store", pg_url)
    assert (code, err) == (0, "")
    assert out == (f"store {pg_url} upgraded from 0004 to {HEAD}; no backup was made "
                   "(PostgreSQL: take one with `pg_dump` before an upgrade)\n")
    assert revision_of(pg_url) == HEAD
    code, out, _ = run_cli(capsys, "runs", "--store", pg_url)
    assert code == 0 and ids[0] in out
    code, out, _ = run_cli(capsys, "store", "upgrade", "--store", pg_url)
    assert (code, out) == (0, f"store {pg_url} is at schema revision {HEAD} already: nothing "
                              "to do\n")


def test_store_upgrade_of_an_empty_database_creates_nothing(capsys, pg_url):
    code, out, err = run_cli(capsys, "store", "upgrade", "--store", pg_url)
    assert (code, out) == (2, "")
    assert err == (f"virtbench: no store at {pg_url}: nothing to upgrade; check --store or "
                   "$VIRTBENCH_STORE\n")
    engine = sa.create_engine(pg_url)
    try:
        assert sa.inspect(engine).get_table_names() == []
    finally:
        engine.dispose()
