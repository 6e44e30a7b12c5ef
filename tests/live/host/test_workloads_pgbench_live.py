"""pgbench through the CLI, natively, at quick size: a fresh PostgreSQL 15 per trial, its
tps and p50 at a fixed offered rate, p99 left out and said (200 transactions offered), and
nothing left behind (the trial's directory under /var/tmp, its server)."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from virtbench.interface.cli import commands as cli
from virtbench.measure.benchmarks.workloads.pgbench import BIN, SCRATCH

pytestmark = pytest.mark.skipif(
    not all(Path(BIN, t).exists() for t in ("initdb", "postgres", "pg_isready", "pgbench")),
    reason=f"PostgreSQL 15 is not installed ({BIN}); apt-get install postgresql-15")


def trial_dirs() -> set[str]:
    """Trial directories holding a cluster (other workloads' trials hold none)."""
    return {p.name for p in Path(SCRATCH).glob("virtbench-served.*") if (p / "data").exists()}


def test_pgbench_quick_through_the_cli(capsys, store_url):
    if os.geteuid() != 0:
        pytest.skip("virtbench runs as root; PostgreSQL runs as the postgres user from there")
    before = trial_dirs()
    code = cli.main(["run", "--env", "native", "--bench", "pgbench", "--quick", "--trials", "2",
                     "--no-progress", "--min-section", "0"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert cli.main(["report", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr()[0])
    rows = {r["metric"]: r for r in data["results"] if r["benchmark"] == "pgbench"}
    assert set(rows) == {"tps", "p50_ms"}
    for r in rows.values():
        assert r["n"] + len(r["disturbed"]) == 2 and r["failed_trials"] == 0
    assert all(1 < x < 1_000_000 for x in rows["tps"]["samples"])
    # 100 transactions/s offered: a median latency in (0 ms, 10 s)
    assert all(0 < x < 10_000 for x in rows["p50_ms"]["samples"])
    left_out = [w for w in data["warnings"] if w["kind"] == "percentile_left_out"]
    assert left_out and "p99_ms" in left_out[0]["message"]
    assert trial_dirs() <= before
    ps = subprocess.run(["pgrep", "-f", f"{BIN}/postgres -D {SCRATCH}/virtbench-served"],
                        capture_output=True, text=True)
    assert ps.stdout.strip() == ""
