"""A fleet's runs as one run (fleet/side_by_side.py): each host's environments labelled
HOST:LABEL, every host against the first host's same environment, the first against its
study's baseline; and two hosts' runs picked for `compare --fleet`. On a SQLite store."""
from __future__ import annotations

import json

import pytest

from fleetkit import host_run
from virtbench.core.errors import VirtbenchError
from virtbench.execution.fleet.side_by_side import FleetView, HostReferences, analyze_fleet
from virtbench.foundations.store import Store


def test_host_references_compare_each_host_with_the_first():
    envs = [{"label": f"{h}:{l}", "metadata": {}} for h in ("a", "b") for l in ("native", "qemu-tcg")]
    envs.append({"label": "b:ssh", "metadata": {}})
    refs = HostReferences(["a", "b"], "a:native", envs)
    assert refs.for_row("a:native", "s", {"s"}).label is None            # the reference
    assert refs.for_row("a:qemu-tcg", "s", {"s"}).label == "a:native"     # a's own report
    r = refs.for_row("b:native", "s", {"s"})
    assert (r.label, r.metric, r.basis) == ("a:native", "s", "host")
    assert refs.for_row("b:qemu-tcg", "s", {"s"}).label == "a:qemu-tcg"
    lone = refs.for_row("b:ssh", "s", {"s"})
    assert lone.label is None and "host a has no ssh" in lone.note


def test_fleet_view_reports_hosts_side_by_side_with_the_usual_statistics(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    fleet = store.create_fleet({"name": "s"}, ["a", "b", "c"])
    host_run(store, fleet, "a", [1.0, 1.01, 0.99, 1.0, 1.02, 0.98])
    host_run(store, fleet, "b", [2.0, 2.02, 1.98, 2.0, 2.01, 1.99])
    doc = analyze_fleet(store, fleet)
    assert doc["run"]["fleet"] == fleet and doc["run"]["hosts"] == ["a", "b"]
    assert [e["label"] for e in doc["environments"]] == ["a:native", "b:native"]
    b = next(r for r in doc["results"] if r["environment"] == "b:native")
    assert b["vs_baseline"]["reference"] == "a:native"
    assert b["vs_baseline"]["overhead_pct"] == pytest.approx(100, abs=2)
    assert b["vs_baseline"]["verdict"] == "fail"
    assert any(w["kind"] == "host_without_run" and "c" in w["message"] for w in doc["warnings"])
    assert FleetView(store, fleet).get_run()["status"] == "complete"
    from virtbench.results.report.fmt.header import header_lines
    assert any(line.startswith("fleet on 2 host(s): a (run ") and "against a's same" in line
               for line in header_lines(doc))
    empty = store.create_fleet({"name": "s"}, ["x"])
    with pytest.raises(VirtbenchError, match="has no run yet"):
        analyze_fleet(store, empty)


def test_compare_fleet_sets_two_hosts_a_b_and_runs_carry_their_fleet(tmp_path, capsys):
    from virtbench.results import analysis
    from virtbench.interface.cli import commands as cli
    from virtbench.execution.fleet.side_by_side import host_runs
    url = f"sqlite:///{tmp_path / 's.db'}"
    store = Store(url)
    fleet = store.create_fleet({"name": "s"}, ["a", "b", "c"])
    ra = host_run(store, fleet, "a", [1.0, 1.01, 0.99, 1.0, 1.02, 0.98])
    rb = host_run(store, fleet, "b", [2.0, 2.02, 1.98, 2.0, 2.01, 1.99])
    assert host_runs(store, fleet, None, None) == (ra, rb)
    assert host_runs(store, fleet, "b", "a") == (rb, ra)
    with pytest.raises(VirtbenchError, match="no run on host 'c'"):
        host_runs(store, fleet, "a", "c")
    assert analysis.analyze_run(store, ra)["run"]["fleet"] == fleet
    assert cli.main(["compare", "--fleet", fleet, "--store", url, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["a"]["host"], doc["b"]["host"]) == ("a", "b")
    row = doc["rows"][0]
    assert row["environment"] == "native" and row["verdict"] == "worse"
    assert cli.main(["compare", "--store", url]) == 2
