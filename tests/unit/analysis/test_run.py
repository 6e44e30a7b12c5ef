"""analyze_run: vs_baseline's new fields, run alpha and method notes, direction of ✗."""
from storekit import around, filled_run

from virtbench.results.analysis import analyze_run
from virtbench.foundations.store import Store


def test_vs_baseline_carries_direction_power_trials_reference_and_alpha(store_url):
    store = Store(store_url)
    run = filled_run(store, {"native": {}, "qemu": {}},
                     {"native": {"retransmits": around(100)}, "qemu": {"retransmits": around(50)}},
                     hib=False)
    result = analyze_run(store, run)
    assert result["run"]["alpha"] == 0.05
    vs = next(r for r in result["results"] if r["environment"] == "qemu")["vs_baseline"]
    # fewer retransmits than native: outside ±10 %, but better, not a slow guest
    assert vs["verdict"] == "fail" and vs["direction"] == "better"
    assert vs["reference"] == "native" and vs["alpha"] == 0.05
    assert vs["power"] is not None and "trials_needed" in vs and "better than native" in vs["message"]


def test_run_alpha_and_method_notes_from_the_stored_study(store_url):
    store = Store(store_url)
    run = filled_run(store, {"native": {}, "qemu": {}},
                     {"native": {"t": around(100)}, "qemu": {"t": around(99)}},
                     study_extra={"alpha": 0.01, "method_notes": {"stream": "arrays 4x LLC"}})
    result = analyze_run(store, run)
    assert result["run"]["alpha"] == 0.01
    assert result["method_notes"] == [{"benchmark": "stream", "note": "arrays 4x LLC"}]
    vs = next(r for r in result["results"] if r["environment"] == "qemu")["vs_baseline"]
    assert vs["alpha"] == 0.01


def test_three_blocks_decide_a_halving_paired_and_three_trials_a_side_cannot_unpaired(store_url):
    # issue 21 changed this on purpose: the verdict is the paired decision by default, whose
    # t interval of three blocks' log ratios lies beyond -10 %; the unpaired permutation test
    # of 3 vs 3 trimmed means cannot reach p < 0.05 at all (as before)
    store = Store(store_url)
    run = filled_run(store, {"native": {}, "qemu": {}},
                     {"native": {"t": around(100, 3)}, "qemu": {"t": around(50, 3, 0.05)}})
    vs = next(r for r in analyze_run(store, run)["results"]
              if r["environment"] == "qemu")["vs_baseline"]
    assert vs["verdict"] == "fail" and vs["direction"] == "worse" and vs["blocks"] == 3
    assert vs["analysis"] == "paired" and vs["ratio_ci_high"] < 0.9
    vs = next(r for r in analyze_run(store, run, analysis="unpaired")["results"]
              if r["environment"] == "qemu")["vs_baseline"]
    assert vs["verdict"] == "inconclusive" and vs["trials_needed"] == 5
    assert vs["analysis"] == "unpaired"


def test_outlier_warning_names_the_stored_trial_number(store_url):
    store = Store(store_url)
    values = [100.0] * 11 + [300.0]
    run = filled_run(store, {"native": {}}, {"native": {"t": values}})
    (w,) = [w for w in analyze_run(store, run)["warnings"] if w["kind"] == "outlier"]
    assert w["message"].startswith("trial 12 (300)")


def test_method_notes_are_the_stored_ones_else_the_benchmarks_own():
    from virtbench.results.analysis.settings import settings_of
    from virtbench.study.stored import method_notes
    study = {"name": "t", "benchmarks": [{"name": "dd", "label": "dd",
                                          "method_note": "conv=fdatasync"},
                                         {"name": "pi", "label": "pi"}]}
    assert method_notes(study) is None
    assert method_notes({**study, "method_notes": {"pi": "k=17"}}) == {"pi": "k=17"}

    class NoEnvironments:
        def environments(self, run_id):
            return []
    s = settings_of(NoEnvironments(), {"id": "r", "study": study})
    assert s.notes == {"dd": "conv=fdatasync"} and s.alpha == 0.05


def test_a_baseline_of_zero_gives_no_ratio_instead_of_a_crash(store_url):
    store = Store(store_url)
    run = filled_run(store, {"native": {}, "qemu": {}},
                     {"native": {"retransmits": [0.0] * 6}, "qemu": {"retransmits": [0, 1, 0, 2, 0, 1]}},
                     hib=False)
    result = analyze_run(store, run)
    row = next(r for r in result["results"] if r["environment"] == "qemu")
    assert row["vs_baseline"] is None and "is 0" in row["reference_note"]
    assert any(w["kind"] == "zero_reference" for w in result["warnings"])
