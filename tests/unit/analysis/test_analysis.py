"""compare_runs on hand-made analyses: pairing by label, by the only environment, by --pair."""
import pytest

from virtbench.results.analysis import compare_runs, environment_pairs
from virtbench.core.errors import VirtbenchError


def analysis(run_id, results):
    envs = sorted({env for env, _ in results})
    return {"run": {"id": run_id}, "environments": [{"label": e} for e in envs],
            "results": [{"environment": env, "benchmark": "stream", "metric": "triad_mb_s",
                         "unit": "MB/s", "higher_is_better": True, "n": len(xs), "samples": xs,
                         "trimmed_mean": sum(xs) / len(xs)} for env, xs in results]}


FAST = [200.0, 201.0, 199.0, 200.5, 199.5, 200.2]
SLOW = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2]


def test_one_environment_each_pairs_whatever_the_labels():
    a = analysis("a", [("qemu/vcpus=1", SLOW)])
    b = analysis("b", [("qemu/vcpus=2", FAST)])
    cmp = compare_runs(a, b)
    assert cmp["pairs"] == {"qemu/vcpus=1": "qemu/vcpus=2"}
    row = cmp["rows"][0]
    assert row["environment"] == "qemu/vcpus=1 → qemu/vcpus=2"
    assert row["change_pct"] == pytest.approx(-100.0, abs=1)    # twice the throughput
    assert row["p_value"] < 0.01 and row["verdict"] == "better"


def test_same_environment_same_numbers_is_not_a_change():
    a = analysis("a", [("native", FAST), ("qemu", SLOW)])
    b = analysis("b", [("native", list(reversed(FAST))), ("qemu", SLOW)])
    assert [r["verdict"] for r in compare_runs(a, b)["rows"]] == ["same", "same"]


def test_explicit_pairs_and_bad_pairs():
    a = analysis("a", [("native", FAST), ("qemu-1", SLOW)])
    b = analysis("b", [("native", FAST), ("qemu-2", FAST)])
    assert environment_pairs(a, b) == {"native": "native"}
    assert environment_pairs(a, b, {"qemu-1": "qemu-2"}) == {"native": "native", "qemu-1": "qemu-2"}
    with pytest.raises(VirtbenchError, match="run B has native, qemu-2"):
        environment_pairs(a, b, {"qemu-1": "qemu-3"})


def test_a_study_environments_note_reaches_the_report():
    from virtbench.results.analysis.stored import environment_note
    from virtbench.results.report.fmt.header import header_lines
    from virtbench.study.design import Study
    study = Study.from_dict({"name": "s", "environments": [
        {"spec": "qemu:disk=ide,e1000_itr=0", "note": "stand-in for 'NAPI removed'"},
        {"spec": "xen:vcpus=1", "note": "XenServer in the paper", "target": "xs"},
        {"spec": "native", "note": None}]})
    env = {"spec": "qemu:disk=ide,e1000_itr=0", "metadata": {}}
    assert environment_note(study, env) == "stand-in for 'NAPI removed'"
    target = {"spec": "ssh:host=h", "metadata": {"stands_for": "xen:vcpus=1"}}
    assert environment_note(study, target) == "XenServer in the paper"
    assert environment_note(study, {"spec": "native", "metadata": None}) is None
    analysis = {"run": {"id": "r", "study": "s", "status": "complete", "quick": False,
                        "baseline": None, "threshold_pct": 10, "trials_planned": 3, "seed": 1},
                "environments": [{"label": "qemu-tcg/ide/virtio-net/e1000_itr=0", "kind": "qemu",
                                  "metadata": {}, "status": "up", "boot_s": None,
                                  "note": "stand-in for 'NAPI removed'"}]}
    assert header_lines(analysis)[3].endswith("note: stand-in for 'NAPI removed'")
