"""The redis workload for real, natively: through the CLI at a small size (ops/s, p50, p99 and
what the closed loop held back), and its loopback script's fill read back by redis-cli."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from virtbench.interface.cli import commands as cli
from virtbench.measure.benchmarks import REGISTRY
from virtbench.measure.benchmarks.workloads.redis import SOCKET
from virtbench.foundations.store import Store

pytestmark = pytest.mark.skipif(
    not all(shutil.which(t) for t in ("redis-server", "redis-cli", "redis-benchmark")),
    reason="redis-server/redis-tools not installed (scripts/setup.sh --all)")


def test_redis_through_the_cli(capsys, store_url):
    # not --quick (100,000 requests, which wins over a given size): 20,000 keep p99 and the
    # test short on a busy host
    code = cli.main(["run", "--env", "native", "--bench",
                     "redis:requests=20000,keyspace=10000", "--trials", "2",
                     "--store", store_url, "--no-progress", "--min-section", "0"])
    out, err = capsys.readouterr()
    assert code == 0, err
    code = cli.main(["report", "--format", "json", "--store", store_url])
    data = json.loads(capsys.readouterr()[0])
    got = {r["metric"]: r for r in data["results"] if r["benchmark"].startswith("redis")}
    assert set(got) == {"ops_per_s", "p50_ms", "p99_ms"}
    for r in got.values():
        assert r["failed_trials"] == 0 and r["samples"]
    assert all(1_000 < v < 5_000_000 for v in got["ops_per_s"]["samples"])
    assert all(0 < p50 <= p99 < 10_000 for p50, p99 in
               zip(got["p50_ms"]["samples"], got["p99_ms"]["samples"]))
    store = Store(store_url)
    run = store.list_runs(limit=1)[0]
    details = [t["detail"] for t in store.trials(run["id"])]
    assert len(details) == 2
    assert all(d["loop"] == "closed" and d["omitted_estimate"] >= 0 for d in details)


def test_redis_from_the_host_side(capsys, store_url):
    code = cli.main(["run", "--env", "native", "--bench",
                     "redis:where=host,requests=20000,keyspace=10000", "--trials", "1",
                     "--store", store_url, "--no-progress", "--min-section", "0"])
    assert code == 0, capsys.readouterr()[1]
    capsys.readouterr()
    store = Store(store_url)
    run = store.list_runs(limit=1)[0]
    [trial] = store.trials(run["id"])
    assert trial["status"] == "ok" and trial["detail"]["loop"] == "closed"
    values = {x["metric"]: x["value"] for x in store.samples(run["id"])}
    assert set(values) == {"ops_per_s", "p50_ms", "p99_ms"} and values["ops_per_s"] > 1_000
    assert not subprocess.run(["pgrep", "-f", "redis-server 10\\."], capture_output=True).stdout


def test_the_fill_holds_the_keys_redis_benchmark_asks_for(tmp_path):
    bench = REGISTRY["redis"]
    params = bench.params({"keyspace": 100, "data": 7, "requests": 1000})
    served = bench.served(params, str(tmp_path), 0)
    served = type(served)(server=[*served.server[:4], "0", *served.server[5:]],
                          ready=served.ready, warmup=served.warmup[:1],
                          client=["redis-cli", "-s", SOCKET, "mget", "key:000000000000",
                                  "key:000000000099", "key:000000000100"],
                          scratch=str(tmp_path))
    r = subprocess.run(served.argv(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["xxxxxxx", "xxxxxxx", ""]
    assert list(tmp_path.iterdir()) == []              # the server stopped, its files gone
