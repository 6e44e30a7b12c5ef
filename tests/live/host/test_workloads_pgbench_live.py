"""pgbench through the CLI, natively, at quick size: a fresh PostgreSQL 15 per trial, its
tps, and p50 and p99 at a fixed offered rate (12,000 transactions offered at 2,000/s), and
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
    code = cli.main(["run", "--env", "native", "--bench", "pgbench", "--quick", "--trials", "1",
                     "--no-progress", "--min-section", "0"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert cli.main(["report", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr()[0])
    rows = {r["metric"]: r for r in data["results"] if r["benchmark"] == "pgbench"}
    behind = [w for w in data["warnings"] if w["kind"] == "rate_not_kept"]
    # a host too busy to keep 2,000/s leaves p99 out of that trial, and says so
    assert set(rows) == {"tps", "p50_ms", "p99_ms"} or behind
    assert not [w for w in data["warnings"] if w["kind"] == "percentile_left_out"]
    for r in (rows["tps"], rows["p50_ms"]):
        assert r["n"] + len(r["disturbed"]) == 1 and r["failed_trials"] == 0
    assert all(1 < x < 1_000_000 for x in rows["tps"]["samples"])
    # 2,000 transactions/s offered: latencies in (0 ms, 10 s), the p99 above the median
    assert all(0 < x < 10_000 for x in rows["p50_ms"]["samples"])
    if "p99_ms" in rows:
        assert min(rows["p99_ms"]["samples"]) >= min(rows["p50_ms"]["samples"])
    assert trial_dirs() <= before
    ps = subprocess.run(["pgrep", "-f", f"{BIN}/postgres -D {SCRATCH}/virtbench-served"],
                        capture_output=True, text=True)
    assert ps.stdout.strip() == ""
