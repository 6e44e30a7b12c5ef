"""The life cycle end to end, through the command line into the JSON report: boot phases
(qemu pc and microvm, container, gVisor), footprint, snapshot, live migration, a density
sweep (native, and qemu guests). Slow: each boots TCG guests or runs several steps; the
pure parts are tested in tests/unit/vmlife/test_vmlife.py and tests/unit/run/test_density.py."""
from __future__ import annotations

import json

import pytest

from virtbench.machinery.host import workroot
from virtbench.interface.cli.commands import main

pytestmark = pytest.mark.slow


def run_json(capsys, tmp_path, *argv) -> dict:
    assert main(["run", *argv, "--no-progress"]) == 0
    capsys.readouterr()
    out = tmp_path / "report.json"
    assert main(["report", "--format", "json", "-o", str(out)]) == 0
    return json.loads(out.read_text())


def values(report: dict, env_prefix: str, bench: str) -> dict[str, list[float]]:
    return {r["metric"]: r["samples"] for r in report["results"]
            if r["environment"].startswith(env_prefix) and r["benchmark"].startswith(bench)}


def work_entries() -> set[str]:
    """What is in the work root: every twin, state file and tick socket goes in a directory
    of its own there, removed after (namespaces are not compared: other work on the host
    makes and removes its own)."""
    root = workroot.root()
    return {p.name for p in root.iterdir()} if root.is_dir() else set()


def kinds(report: dict) -> set[str]:
    return {w["kind"] for w in report["warnings"]}


@pytest.mark.parametrize("spec, prefix, phases", [
    ("qemu:machine=pc", "qemu", ["vmm_s", "firmware_s", "kernel_s", "initramfs_s", "init_s",
                                 "agent_s"]),
    ("qemu:machine=microvm", "qemu", ["vmm_s", "kernel_s", "initramfs_s", "init_s", "agent_s"]),
    ("container", "container", ["runtime_s", "agent_s"]),
    ("gvisor", "gvisor", ["runtime_s", "sandbox_s", "agent_s"]),
])
def test_boot_phases_sum_to_the_total_and_footprint(spec, prefix, phases, capsys, tmp_path,
                                                    store_url):
    before = work_entries()
    report = run_json(capsys, tmp_path, "--env", spec, "--bench", "boot", "--bench",
                      "footprint", "--trials", "1")
    boot = values(report, prefix, "boot")
    spans = {"to_kernel_s"} if prefix == "qemu" else set()      # the firmware's share
    assert set(boot) == set(phases) | {"total_s"} | spans
    assert all(boot[p][0] > 0 for p in phases)
    assert sum(boot[p][0] for p in phases) == pytest.approx(boot["total_s"][0], rel=0.01)
    assert "boot_phase_mismatch" not in kinds(report)
    fp = values(report, prefix, "footprint")
    assert fp["overhead_mib"][0] == pytest.approx(fp["pss_mib"][0] - fp["guest_resident_mib"][0],
                                                  rel=0.05)
    assert 0 < fp["uss_mib"][0] <= fp["rss_mib"][0]
    assert work_entries() <= before


def test_snapshot_at_two_sizes_restores_a_working_guest(capsys, tmp_path, store_url):
    before = work_entries()
    report = run_json(capsys, tmp_path, "--env", "qemu", "--bench", "snapshot:mem=256M",
                      "--bench", "snapshot:mem=512M", "--trials", "1", "--quick")
    small, large = (values(report, "qemu", f"snapshot[mem={m}") for m in ("256M", "512M"))
    for v in (small, large):
        assert v["save_s"][0] > 0 and v["restore_s"][0] >= v["restore_load_s"][0] > 0
    assert large["save_mib"][0] > small["save_mib"][0] * 0.9
    assert "restore_broken" not in kinds(report)
    assert work_entries() <= before


def test_live_migration_under_a_ticker(capsys, tmp_path, store_url):
    report = run_json(capsys, tmp_path, "--env", "qemu:mem=512M", "--bench", "migrate",
                      "--trials", "1", "--quick")
    v = values(report, "qemu", "migrate")
    assert v["total_s"][0] > v["downtime_s"][0] > 0
    assert v["downtime_guest_s"][0] >= v["downtime_s"][0]      # the guest sees at least it
    assert v["work_lost_s"][0] >= 0 and v["transferred_mib"][0] > 0


def test_density_native_finds_this_hosts_knee(capsys, tmp_path, store_url):
    out = tmp_path / "density.json"
    assert main(["density", "--env", "native", "--bench", "cyclepi:steps=200000000",
                 "--max", "6", "--trials", "2", "--no-progress", "--format", "json",
                 "-o", str(out)]) == 0
    d = json.loads(out.read_text())
    curve = d["curves"][0]
    assert d["stop_reason"] in ("qos", "aggregate_flat", "max")
    assert [s["count"] for s in curve["steps"]] == list(range(1, len(curve["steps"]) + 1))
    assert curve["knee"] is not None and curve["knee"] < len(curve["steps"]) or \
        curve["stop_reason"] == "max"
    # the sweep is stored: its report reads it back, each step's run names it
    capsys.readouterr()
    stored = tmp_path / "stored.json"
    assert main(["report", d["run_id"], "--format", "json", "-o", str(stored)]) == 0
    back = json.loads(stored.read_text())
    assert back["run"]["status"] == "complete" and back["density"]["curves"] == d["curves"]
    step = tmp_path / "step.json"
    assert main(["report", curve["steps"][-1]["run_id"], "--format", "json", "-o",
                 str(step)]) == 0
    assert json.loads(step.read_text())["run"]["density_sweep"] == d["run_id"]


def test_density_of_qemu_guests(capsys, tmp_path, store_url):
    out = tmp_path / "density.html"
    assert main(["density", "--env", "qemu:mem=512M", "--bench", "cyclepi", "--max", "3",
                 "--trials", "2", "--quick", "--no-progress", "--format", "html",
                 "-o", str(out)]) == 0
    html = out.read_text()
    assert "knee:" in html and "QoS floor" in html and "native aggregate (reference" in html
    assert " MiB</td>" in html                 # each step's guests' host memory (PSS)
