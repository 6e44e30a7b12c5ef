"""The live part of tests/unit/vmlife/test_vmlife.py: its tests that need root and this host.

The life cycle's pure parts on real captures from this machine (tests/fixtures/lifecycle,
made by its capture.py from virtbench's own runs under TCG): boot phases from the boot
timer's stamps and the guest's kernel log, PSS/USS arithmetic from /proc's smaps files,
migration figures from QMP's reply, the guest-observed gap and the work lost from a real
ticker's lines, microvm's TSC rate from /proc/cpuinfo.
"""
from __future__ import annotations
import json
from pathlib import Path
import pytest

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "lifecycle"


def load(name: str) -> dict:
    return json.loads((FIX / name).read_text())


def test_migration_timeline_from_real_trials_into_the_html():
    """The migrate trials of a real run (virtbench run --env qemu:machine=pc --bench migrate
    ..., this host, TCG): their stored detail and samples, as the store gave them."""
    from virtbench.results import report as reports
    from virtbench.results.analysis.trials import migration_timelines
    from virtbench.foundations.model import RunReport
    from virtbench.results.report import charts
    stored = load("migrate-trials.json")
    got = migration_timelines(stored["trials"], stored["samples"])
    ok = [t for t in stored["trials"] if t["status"] == "ok"]
    assert len(got) == len(ok) >= 1
    m = got[0]
    values = {s["metric"]: s["value"] for s in stored["samples"]
              if s["trial"] == ok[0]["trial"] and s["benchmark"] == ok[0]["benchmark"]}
    assert m.trial == ok[0]["trial"] + 1
    assert (m.total_s, m.downtime_guest_s) == (values["total_s"], values["downtime_guest_s"])
    assert m.points == ok[0]["detail"]["migrate"]["timeline"]
    assert all(a[0] <= b[0] and a[1] <= b[1] for a, b in zip(m.points, m.points[1:]))
    # the guest's gap lies within the migration's window
    assert m.gap_at_s - m.downtime_guest_s >= -0.5 and m.gap_at_s <= m.total_s + 1.0
    fig = charts.migration_figure(m, "t")
    gap = fig["layout"]["shapes"][1]
    assert gap["x1"] - gap["x0"] == pytest.approx(m.downtime_guest_s)
    assert fig["layout"]["shapes"][0]["x1"] == m.total_s
    # a trial that failed or did not converge has no timeline
    bad = [{**ok[0], "status": "failed"},
           {**ok[0], "detail": {"migrate": {**ok[0]["detail"]["migrate"], "converged": False}}}]
    assert migration_timelines(bad, stored["samples"]) == []
    # the run's own JSON report carries them, and its HTML draws one per environment
    run = RunReport.of(load("report-snapshot-migrate.json"))
    assert [x.model_dump() for x in run.migrations] == [x.model_dump() for x in got]
    html = reports.render(run, "html")
    assert html.count("migrate: timeline of trial") == 1
    assert "guest-observed downtime" in html
