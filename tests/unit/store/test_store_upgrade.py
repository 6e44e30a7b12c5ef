"""Schema revisions: a new store is made at head, an older one (with or without revisions) is
upgraded with its rows intact, a newer one is refused in one line; on SQLite and PostgreSQL."""
import subprocess
import sys
import threading
import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from virtbench.foundations.store import HEAD, REVISIONS, Sample, Store, TrialRecord
from virtbench.foundations.store.upgrade import REVISIONS_DIR, StoreTooNew, current_revision
from virtbench.foundations.store.schema import metadata


def _config(conn=None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(REVISIONS_DIR))
    config.attributes["connection"] = conn
    return config


def _alembic(url, action, revision):
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        getattr(command, action)(_config(conn), revision)
    engine.dispose()


def _revision(url):
    engine = sa.create_engine(url)
    try:
        return current_revision(engine)
    finally:
        engine.dispose()


def _execute(url, *statements):
    engine = sa.create_engine(url)
    with engine.begin() as c:
        for s in statements:
            c.execute(sa.text(s) if isinstance(s, str) else s)
    engine.dispose()


def test_the_revision_list_is_the_revision_scripts():
    script = ScriptDirectory.from_config(_config())
    assert [r.revision for r in reversed(list(script.walk_revisions()))] == list(REVISIONS)
    assert script.get_current_head() == HEAD


def test_revisions_from_nothing_make_exactly_the_schema_of_schema_py(store_url):
    _alembic(store_url, "upgrade", "head")
    engine = sa.create_engine(store_url)
    with engine.connect() as c:
        assert compare_metadata(MigrationContext.configure(c), metadata) == []
    engine.dispose()
    assert _revision(store_url) == HEAD


def test_a_new_store_is_made_at_head(store_url):
    store = Store(store_url)
    assert _revision(store_url) == HEAD
    assert sa.inspect(store.engine).has_table("fleets")
    Store(store_url)                                     # and opens again as it is
    assert _revision(store_url) == HEAD


def _old_metadata() -> sa.MetaData:
    """The first schema, as virtbench at cf1ed1d made it (tests/fixtures/store/main-cf1ed1d.db):
    before warm-ups, boots, superseded trials, profiles and fleets; no revisions."""
    old = sa.MetaData()

    def run_fk():
        return sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id", ondelete="CASCADE"),
                         nullable=False)

    def text(*names):
        return [sa.Column(n, sa.Text) for n in names]

    tz = sa.DateTime(timezone=True)
    sa.Table("runs", old, sa.Column("id", sa.String(40), primary_key=True),
             sa.Column("study_name", sa.String(200), nullable=False),
             sa.Column("study", sa.JSON, nullable=False),
             sa.Column("seed", sa.BigInteger, nullable=False),
             sa.Column("quick", sa.Boolean, nullable=False),
             sa.Column("status", sa.String(20), nullable=False),
             sa.Column("started", tz, nullable=False), sa.Column("finished", tz),
             sa.Column("virtbench_version", sa.String(20)), sa.Column("host", sa.String(200)))
    sa.Table("environments", old, sa.Column("id", sa.Integer, primary_key=True), run_fk(),
             sa.Column("label", sa.String(200), nullable=False),
             sa.Column("kind", sa.String(40), nullable=False),
             sa.Column("spec", sa.String(400), nullable=False),
             sa.Column("options", sa.JSON, nullable=False), sa.Column("metadata", sa.JSON),
             sa.Column("status", sa.String(20), nullable=False), *text("error"),
             sa.Column("boot_s", sa.Float), sa.UniqueConstraint("run_id", "label"))
    sa.Table("trials", old, sa.Column("id", sa.Integer, primary_key=True), run_fk(),
             sa.Column("environment", sa.String(200), nullable=False),
             sa.Column("benchmark", sa.String(200), nullable=False),
             sa.Column("benchmark_name", sa.String(100), nullable=False),
             sa.Column("params", sa.JSON, nullable=False),
             sa.Column("trial", sa.Integer, nullable=False),
             sa.Column("seq", sa.Integer, nullable=False),
             sa.Column("status", sa.String(20), nullable=False), *text("error"),
             sa.Column("exit", sa.Integer), *text("stdout", "stderr"),
             sa.Column("wall_s", sa.Float), sa.Column("started", tz), sa.Column("finished", tz),
             sa.UniqueConstraint("run_id", "environment", "benchmark", "trial"))
    sa.Table("warnings", old, sa.Column("id", sa.Integer, primary_key=True), run_fk(),
             sa.Column("environment", sa.String(200)), sa.Column("benchmark", sa.String(200)),
             sa.Column("metric", sa.String(100)),
             sa.Column("kind", sa.String(40), nullable=False),
             sa.Column("message", sa.Text, nullable=False))
    sa.Table("samples", old, sa.Column("id", sa.Integer, primary_key=True),
             sa.Column("trial_id", sa.Integer, sa.ForeignKey("trials.id", ondelete="CASCADE"),
                       nullable=False),
             sa.Column("metric", sa.String(100), nullable=False),
             sa.Column("value", sa.Float, nullable=False),
             sa.Column("unit", sa.String(40), nullable=False),
             sa.Column("higher_is_better", sa.Boolean, nullable=False))
    return old


def _fill_old(url):
    """An old store with one run of two trials (2 samples)."""
    old = _old_metadata()
    engine = sa.create_engine(url)
    old.create_all(engine)
    from datetime import datetime, timezone
    t0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    with engine.begin() as c:
        c.execute(old.tables["runs"].insert().values(
            id="r-old", study_name="quick", study={"name": "quick"}, seed=3, quick=True,
            status="complete", started=t0, finished=t0, virtbench_version="0.0.1", host="h"))
        for t in (0, 1):
            c.execute(old.tables["trials"].insert().values(
                id=10 + t, run_id="r-old", environment="native", benchmark="pi",
                benchmark_name="pi", params={"k": 17}, trial=t, seq=t, status="ok", exit=0))
            c.execute(old.tables["samples"].insert().values(
                trial_id=10 + t, metric="seconds", value=1.5 + t, unit="s",
                higher_is_better=False))
    engine.dispose()


def test_a_store_older_than_revisions_is_upgraded_with_its_rows_intact(store_url):
    _fill_old(store_url)
    assert _revision(store_url) is None
    store = Store(store_url)
    assert _revision(store_url) == HEAD
    run = store.get_run("r-old")
    assert (run["study"], run["seed"], run["host"], run["fleet"]) == ({"name": "quick"}, 3,
                                                                      "h", None)
    assert [(t["trial"], t["params"], t["warmup"], t["boot"]) for t in store.trials("r-old")] == \
        [(0, {"k": 17}, False, None), (1, {"k": 17}, False, None)]
    assert [s["value"] for s in store.samples("r-old")] == [1.5, 2.5]
    # every table of head is there and takes rows
    engine = sa.create_engine(store_url)
    with engine.connect() as c:
        assert compare_metadata(MigrationContext.configure(c), metadata) == []
    engine.dispose()
    fleet = store.create_fleet({"name": "quick"}, ["a"])
    store.record_boot("r-old", "native", "first start")
    store.record_trial("r-old", TrialRecord(
        environment="native", benchmark="pi", benchmark_name="pi",
        params={}, trial=-1, seq=-1, status="ok", warmup=True,
        samples=[Sample("seconds", 9.0, "s", False)]))
    assert [r["id"] for r in store.fleet_runs(fleet)] == []
    assert len(store.samples("r-old")) == 2 and len(store.samples("r-old", True)) == 3


def test_a_store_of_main_before_revisions_with_fleets_already_is_stamped_and_upgraded(store_url):
    engine = sa.create_engine(store_url)
    metadata.create_all(engine)                       # what virtbench at 8c94e10 made
    engine.dispose()
    _execute(store_url, "INSERT INTO fleets (id, study_name, study, hosts, created) VALUES "
             "('fleet-1', 'q', '{}', '[\"a\"]', '2026-01-01 00:00:00+00')")
    store = Store(store_url)
    assert _revision(store_url) == HEAD
    assert store.get_fleet("fleet-1")["hosts"] == ["a"]


def test_a_store_at_an_older_revision_is_upgraded(store_url):
    _alembic(store_url, "upgrade", "0001")
    _execute(store_url, "INSERT INTO runs (id, study_name, study, seed, quick, status, started)"
             " VALUES ('r1', 'q', '{\"name\": \"q\"}', 1, true, 'complete',"
             " '2026-01-01 00:00:00+00')")
    assert _revision(store_url) == "0001"
    store = Store(store_url)
    assert _revision(store_url) == HEAD
    assert store.get_run("r1")["fleet"] is None


def test_a_store_newer_than_this_virtbench_is_refused_in_one_line_and_left_alone(store_url):
    Store(store_url)
    _execute(store_url, "UPDATE alembic_version SET version_num = '0099'")
    with pytest.raises(StoreTooNew) as exc:
        Store(store_url)
    assert str(exc.value) == (f"store {store_url} has schema revision 0099, newer than this "
                              f"virtbench knows (head {HEAD}); upgrade virtbench")
    out = subprocess.run([sys.executable, "-m", "virtbench.interface.cli.commands", "runs", "--store", store_url],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [f"virtbench: {exc.value}"]
    assert _revision(store_url) == "0099"


def test_a_pre_revision_store_with_a_newer_version_row_is_not_touched(store_url):
    _fill_old(store_url)
    _execute(store_url, "CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)",
             "INSERT INTO alembic_version VALUES ('abc123')")
    with pytest.raises(StoreTooNew):
        Store(store_url)
    engine = sa.create_engine(store_url)
    assert "warmup" not in {c["name"] for c in sa.inspect(engine).get_columns("trials")}
    engine.dispose()


def _open_at_once(url: str, n: int = 4) -> list[Exception]:
    errors = []

    def open_it():
        try:
            Store(url).engine.dispose()
        except Exception as exc:   # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_several_openers_of_one_new_store_create_it_once(store_url):
    assert _open_at_once(store_url) == []
    engine = sa.create_engine(store_url)
    with engine.connect() as c:
        assert c.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all() \
            == [HEAD]
    engine.dispose()


def test_openers_racing_on_new_sqlite_files_never_fail(tmp_path):
    # the races were rare (SQLite's WAL switch takes a lock without waiting for it; the
    # revision table appearing between two looks): a few in a hundred new files
    for i in range(100):
        assert _open_at_once(f"sqlite:///{tmp_path / f's{i}.db'}") == [], f"file {i}"


def test_opening_a_store_at_head_reads_its_revision_and_loads_no_alembic(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    Store(url)
    code = ("import sys; from virtbench.foundations.store import Store; Store(sys.argv[1]); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'alembic'))")
    out = subprocess.run([sys.executable, "-c", code, url], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
