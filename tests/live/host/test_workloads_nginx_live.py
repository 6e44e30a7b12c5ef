"""nginx natively through the CLI at quick size: nginx 1.22 and wrk 4.1 from Debian 12, a
fresh server per trial, the metrics there and plausible (under ~30 s here)."""
from __future__ import annotations

import json
import shutil

import pytest

from virtbench.interface.cli import commands as cli


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def tools_here():
    for tool, package in (("nginx", "nginx-light"), ("wrk", "wrk")):
        if shutil.which(tool) is None and shutil.which(f"/usr/sbin/{tool}") is None:
            pytest.skip(f"{tool} is not installed here (apt-get install {package})")


def test_quick_nginx_run_reports_requests_per_s_and_p50(capsys, store_url):
    code, out, err = run_cli(capsys, "run", "--env", "native", "--bench", "nginx", "--quick",
                             "--trials", "2", "--store", store_url, "--no-progress")
    assert code == 0, err + out
    code, out, _ = run_cli(capsys, "report", "--format", "json", "--store", store_url)
    assert code == 0
    data = json.loads(out)
    results = {r["metric"]: r for r in data["results"] if r["benchmark"] == "nginx"}
    # quick: 100 connections x (4 s / 1 s - 2) = 200 requests at least: p50 kept, p99 not
    assert set(results) == {"requests_per_s", "p50_ms"}
    for r in results.values():
        assert r["failed_trials"] == 0 and len(r["samples"]) >= 1
    assert all(500 < s < 5_000_000 for s in results["requests_per_s"]["samples"])
    assert all(0 < s < 1000 for s in results["p50_ms"]["samples"])
    kinds = {w["kind"] for w in data["warnings"] if w.get("benchmark") == "nginx"}
    assert "percentile_left_out" in kinds


def test_a_port_already_taken_is_a_failed_trial_naming_it():
    """nginx cannot bind: the trial stops at once with the server's own line, and no
    request reaches the other listener (the file's name is the trial's own)."""
    import socket
    import subprocess

    from virtbench.measure.benchmarks import REGISTRY
    from virtbench.measure.benchmarks.workloads import served

    bench = REGISTRY["nginx"]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        script = bench.served(bench.params({}, quick=True), port, "mine").argv()
        r = subprocess.run(script, capture_output=True, text=True, timeout=60)
    assert r.returncode == served.SERVER_GONE_EXIT, r.stderr
    lines = r.stderr.splitlines()
    assert lines[0] == "virtbench: the server exited before it answered"
    assert any("Address already in use" in x for x in lines[1:])
    assert r.stdout == ""
