"""The tests' own PostgreSQL: it serves a fresh database, stops and starts on the same data, and
leaves nothing behind even when the process that started it is killed."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

import pgserver


def test_fresh_database_per_url_and_data_survive_a_restart(pg_server):
    a, b = pg_server.url_for(), pg_server.url_for()
    assert a != b and "host=" in a
    engine = sa.create_engine(a)
    with engine.begin() as c:
        c.execute(sa.text("create table t (x int)"))
        c.execute(sa.text("insert into t values (7)"))
    engine.dispose()
    pg_server.stop()
    with pytest.raises(sa.exc.OperationalError):
        with sa.create_engine(a).connect() as c:
            c.execute(sa.text("select 1"))
    pg_server.start()
    engine = sa.create_engine(a)
    with engine.connect() as c:
        assert c.execute(sa.text("select x from t")).scalar() == 7
    engine.dispose()
    engine = sa.create_engine(b)
    with engine.connect() as c:   # b is empty
        assert c.execute(sa.text("select count(*) from pg_tables where schemaname='public'"))\
            .scalar() == 0
    engine.dispose()


_OWNER = """
import sys, time
sys.path.insert(0, sys.argv[1])
import pgserver
s = pgserver.PgServer(pgserver.find_bindir())
s.start()
print(s.root, s.pid, s.watchdog.pid, flush=True)
time.sleep(600)
"""


def test_killed_owner_leaves_no_server_and_no_directory():
    if pgserver.skip_reason():
        pytest.skip(pgserver.skip_reason())
    owner = subprocess.Popen([sys.executable, "-c", _OWNER, str(Path(__file__).resolve().parents[2] / "support")],
                             stdout=subprocess.PIPE, text=True)
    try:
        root, pid, watchdog = owner.stdout.readline().split()
        pid, watchdog = int(pid), int(watchdog)
        assert pgserver._alive(pid) and Path(root).is_dir()
    finally:
        owner.kill()
        owner.wait()
    deadline = time.monotonic() + 30
    while (pgserver._alive(pid) or Path(root).exists() or pgserver._alive(watchdog)) \
            and time.monotonic() < deadline:    # the watchdog exits once it has cleaned
        time.sleep(0.1)
    assert not pgserver._alive(pid), "postmaster outlived the killed test process"
    assert not Path(root).exists()
    assert not pgserver._alive(watchdog)


def test_without_postgresql_the_fixture_says_to_run_setup(monkeypatch):
    monkeypatch.setattr(pgserver, "find_bindir", lambda: None)
    assert "scripts/setup.sh" in pgserver.skip_reason()


def test_the_binaries_are_found_where_debian_puts_them(monkeypatch, tmp_path):
    monkeypatch.setenv("VIRTBENCH_PG_BINDIR", str(tmp_path))      # empty: not a bindir
    found = pgserver.find_bindir()
    assert found != tmp_path                 # an empty directory is passed over for Debian's
    assert found is None or (found / "initdb").is_file()
    for name in ("initdb", "pg_ctl"):
        (tmp_path / name).write_text("")
    assert pgserver.find_bindir() == tmp_path
