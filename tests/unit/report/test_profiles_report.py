"""Exit profiles in every report format and `report --profile` (rendering only: the profile
is written into the store by hand, in the shape the profilers produce)."""
import csv
import io
import json

import pytest
from reportkit import fill_store, study_dict

from virtbench.interface.cli import commands as cli
from virtbench.results import report
from virtbench.results.analysis import analyze_run
from virtbench.foundations.model.profile import FunctionRow, ReasonRow
from virtbench.machinery.exits.exit_profile import ExitProfile
from virtbench.foundations.store import Store

TCG = "qemu-tcg/ide/e1000"


def ide_profile() -> ExitProfile:
    return ExitProfile(
        source="tcg", duration_s=4.2,
        by_reason=[ReasonRow(reason="pio", count=900, share_pct=90.0),
                   ReasonRow(reason="mmio", count=100, share_pct=10.0)],
        by_function=[
            FunctionRow(address="0xffffffffc0123456", function="ata_sff_check_status+0x1c",
                        caller=None, count=600, share_pct=60.0, device="port 0x1f7"),
            FunctionRow(address="0xffffffff81555555", function="ioread8+0x2a",
                        caller="ata_sff_altstatus", count=300, share_pct=30.0,
                        device="port 0x3f6"),
            FunctionRow(address="0xffffffff81066666", function="native_apic_mem_write+0x4",
                        caller=None, count=100, share_pct=10.0, device="apic")],
        notes=["would-be exits: port I/O and MMIO to emulated devices"])


@pytest.fixture
def store_with_profile(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'p.db'}"
    monkeypatch.setenv("VIRTBENCH_STORE", url)
    store = Store(url)
    run_id = fill_store(store, study_dict())
    store.record_profile(run_id, TCG, "pi", profile=ide_profile().to_json(), wall_s=4.3)
    store.record_profile(run_id, "qemu-kvm/virtio-blk/virtio-net", "pi", profile=None,
                         error="perf is not installed: apt-get install linux-perf")
    return store, run_id


def test_json_carries_profiles_beside_the_overhead_they_explain(store_with_profile):
    store, run_id = store_with_profile
    data = analyze_run(store, run_id)
    ok = next(p for p in data["profiles"] if p["environment"] == TCG)
    assert ok["source"] == "tcg" and ok["duration_s"] == 4.2 and ok["status"] == "ok"
    assert ok["by_function"][0]["function"] == "ata_sff_check_status+0x1c"
    assert ok["by_function"][1]["caller"] == "ata_sff_altstatus"
    [explained] = ok["explains"]
    assert explained["metric"] == "seconds" and explained["overhead_pct"] > 30
    failed = next(p for p in data["profiles"] if p["status"] == "failed")
    assert "linux-perf" in failed["error"] and failed["by_function"] == []


def test_a_second_profile_of_the_same_pair_replaces_the_first(store_with_profile):
    store, run_id = store_with_profile
    store.record_profile(run_id, TCG, "pi", profile=None, error="guest lost")
    rows = [p for p in store.profiles(run_id) if p["environment"] == TCG]
    assert len(rows) == 1 and rows[0]["error"] == "guest lost"


@pytest.mark.parametrize("fmt", ["table", "markdown", "html"])
def test_every_format_shows_the_top_functions(store_with_profile, fmt):
    store, run_id = store_with_profile
    text = report.render(analyze_run(store, run_id), fmt)
    if fmt == "markdown":
        text = text.replace("\\_", "_")          # markdown escapes underscores
    assert "ata_sff_check_status+0x1c" in text and "ata_sff_altstatus" in text
    assert "port 0x1f7" in text and "linux-perf" in text
    assert "overhead it explains: seconds +" in text


def test_report_profile_shows_only_the_profiles(store_with_profile, capsys):
    assert cli.main(["report", "--profile", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"run", "profiles"} and len(data["profiles"]) == 2
    assert cli.main(["report", "--profile"]) == 0
    text = capsys.readouterr().out
    assert "ata_sff_check_status" in text and "triad_mb_s" not in text
    assert cli.main(["report", "--profile", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["reason"] for r in rows if r["reason"]] == ["pio", "mmio"]
    assert rows[2]["function"] == "ata_sff_check_status+0x1c" and rows[2]["count"] == "600"


def test_a_run_without_profiles_says_how_to_record_them(tmp_path, monkeypatch, capsys):
    url = f"sqlite:///{tmp_path / 'n.db'}"
    monkeypatch.setenv("VIRTBENCH_STORE", url)
    fill_store(Store(url), study_dict())
    assert cli.main(["report", "--profile"]) == 0
    assert "--profile exits" in capsys.readouterr().out
