"""Instances against the right baseline: per-instance vs the single baseline, the aggregate
vs the baseline at the same N when the run has it, else no verdict and a note."""
import pytest
from storekit import around, filled_run

from virtbench.results.analysis import References, analyze_run
from virtbench.foundations.store import Store


def _group(n, each):
    m = {"triad_mb_s": [x * n for x in each]}
    for i in range(n):
        m[f"triad_mb_s_i{i}"] = each
    m["triad_mb_s_fairness"] = [1.0] * len(each)
    return m


def _rows(result, env):
    return {r["metric"]: r for r in result["results"] if r["environment"] == env}


def test_without_native_at_n_the_aggregate_has_no_verdict(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    run = filled_run(store, {"native": {}, "qemu-kvm/x4": {"instances": 4}},
                     {"native": {"triad_mb_s": around(1000)},
                      "qemu-kvm/x4": _group(4, around(500))})
    rows = _rows(analyze_run(store, run), "qemu-kvm/x4")
    agg = rows["triad_mb_s"]
    # 4 x 500 = 2000 against one native process at 1000 would read "2x better": not given
    assert agg["vs_baseline"] is None
    assert "no like-for-like baseline" in agg["reference_note"]
    assert "native/x4" in agg["reference_note"]
    inst = rows["triad_mb_s_i2"]["vs_baseline"]
    assert inst["reference"] == "native" and inst["reference_metric"] == "triad_mb_s"
    assert inst["basis"] == "per-instance"
    assert inst["ratio"] == pytest.approx(0.5, rel=0.02)
    assert inst["verdict"] == "fail" and inst["direction"] == "worse"


def test_with_native_at_n_the_aggregate_is_compared_like_for_like(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    run = filled_run(store, {"native": {}, "native/x4": {"instances": 4},
                             "qemu-kvm/x4": {"instances": 4}},
                     {"native": {"triad_mb_s": around(1000)},
                      "native/x4": _group(4, around(600)),
                      "qemu-kvm/x4": _group(4, around(570))})
    result = analyze_run(store, run)
    agg = _rows(result, "qemu-kvm/x4")["triad_mb_s"]["vs_baseline"]
    assert agg["reference"] == "native/x4" and agg["basis"] == "same-instances"
    assert agg["ratio"] == pytest.approx(0.95, rel=0.02)
    fair = _rows(result, "qemu-kvm/x4")["triad_mb_s_fairness"]["vs_baseline"]
    assert fair["reference"] == "native/x4"
    # the baseline at N is itself the reference for aggregates; its instances still go
    # against one native process
    native4 = _rows(result, "native/x4")
    assert native4["triad_mb_s"]["vs_baseline"] is None
    assert native4["triad_mb_s_i0"]["vs_baseline"]["reference"] == "native"


def test_reference_selection_is_pure():
    envs = [{"label": "native"}, {"label": "qemu"}, {"label": "qemu/x2", "metadata": {"instances": 2}}]
    refs = References("native", envs)
    ms = {"t", "t_i0", "t_i1", "t_spread_pct"}
    assert refs.for_row("qemu", "t", {"t"}).label == "native"
    assert refs.for_row("native", "t", {"t"}).label is None
    assert refs.for_row("qemu/x2", "t_i1", ms).label == "native"
    assert refs.for_row("qemu/x2", "t_spread_pct", ms).label is None
    assert refs.for_row("qemu/x2", "t", ms).note


def test_no_baseline_means_no_reference_and_no_note():
    refs = References(None, [{"label": "qemu"}, {"label": "qemu/x2", "metadata": {"instances": 2}}])
    r = refs.for_row("qemu/x2", "t", {"t", "t_i0", "t_i1"})
    assert r.label is None and r.note is None
    assert refs.for_row("qemu/x2", "t_i0", {"t", "t_i0", "t_i1"}).label is None
