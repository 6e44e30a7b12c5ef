"""The schema revisions ship in the wheel (package data), not only in a source checkout: a store
older than revisions is upgraded by virtbench installed from the wheel."""
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

_UPGRADE = """
import sqlite3, sys
import virtbench.foundations.store as s
assert s.__file__.startswith(sys.argv[2]), s.__file__
db = sys.argv[1]
c = sqlite3.connect(db)
c.execute("CREATE TABLE runs (id VARCHAR(40) PRIMARY KEY, study_name VARCHAR(200) NOT NULL,"
          " study JSON NOT NULL, seed BIGINT NOT NULL, quick BOOLEAN NOT NULL,"
          " status VARCHAR(20) NOT NULL, started DATETIME NOT NULL, finished DATETIME,"
          " virtbench_version VARCHAR(20), host VARCHAR(200))")
c.execute("CREATE TABLE trials (id INTEGER PRIMARY KEY, run_id VARCHAR(40) NOT NULL,"
          " environment VARCHAR(200) NOT NULL, benchmark VARCHAR(200) NOT NULL,"
          " benchmark_name VARCHAR(100) NOT NULL, params JSON NOT NULL, trial INTEGER NOT NULL,"
          " seq INTEGER NOT NULL, status VARCHAR(20) NOT NULL, error TEXT, exit INTEGER,"
          " stdout TEXT, stderr TEXT, wall_s FLOAT, started DATETIME, finished DATETIME)")
c.commit(); c.close()
s.Store("sqlite:///" + db)
print(sqlite3.connect(db).execute("select version_num from alembic_version").fetchone()[0])
"""


def test_the_wheel_carries_the_schema_revisions_and_upgrades_an_old_store(tmp_path):
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                          str(tmp_path / "dist"), str(REPO)], capture_output=True, text=True,
                         timeout=300)
    if out.returncode != 0 and "No matching distribution" in out.stderr:
        pytest.skip("no package index here to fetch hatchling: " + out.stderr.strip()[-200:])
    assert out.returncode == 0, out.stderr
    wheel = next((tmp_path / "dist").glob("virtbench-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "virtbench/foundations/store/revisions/env.py" in names
    assert "virtbench/foundations/store/revisions/versions/0002_fleets.py" in names
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    # run from the unpacked wheel only: not the checkout (cwd elsewhere, the wheel first)
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", _UPGRADE, str(tmp_path / "old.db"), str(site)],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    from virtbench.foundations.store import HEAD
    assert done.stdout.strip() == HEAD
