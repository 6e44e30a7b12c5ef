"""compare: verdicts that know their power, rows in one run only, differing metadata."""
from storekit import around, filled_run

from virtbench.results.analysis import analyze_run, compare_runs
from virtbench.foundations.store import Store


def _store(url):
    return Store(url)


def test_three_trial_runs_twice_as_slow_are_inconclusive_with_trials_needed(store_url):
    store = _store(store_url)
    a = filled_run(store, {"native": {}}, {"native": {"triad_mb_s": around(1000, 3)}})
    b = filled_run(store, {"native": {}}, {"native": {"triad_mb_s": around(500, 3)}})
    cmp = compare_runs(analyze_run(store, a), analyze_run(store, b))
    (row,) = cmp["rows"]
    assert row["change_pct"] > 40
    assert row["verdict"] == "inconclusive" and row["trials_needed"] == 6   # alpha 0.01
    assert "6 trials per side" in row["message"]


def test_twelve_trial_runs_twice_as_slow_are_worse_and_twice_as_fast_better(store_url):
    store = _store(store_url)
    a = filled_run(store, {"native": {}}, {"native": {"triad_mb_s": around(1000)}})
    b = filled_run(store, {"native": {}}, {"native": {"triad_mb_s": around(500)}})
    ra, rb = analyze_run(store, a), analyze_run(store, b)
    assert compare_runs(ra, rb)["rows"][0]["verdict"] == "worse"
    assert compare_runs(rb, ra)["rows"][0]["verdict"] == "better"


def test_rows_only_in_one_run_are_listed_both_ways(store_url):
    store = _store(store_url)
    a = filled_run(store, {"native": {}, "qemu-tcg": {}},
                   {"native": {"triad_mb_s": around(1000)}, "qemu-tcg": {"triad_mb_s": around(400)}})
    b = filled_run(store, {"native": {}, "qemu-kvm": {}},
                   {"native": {"triad_mb_s": around(1000), "copy_mb_s": around(900)},
                    "qemu-kvm": {"triad_mb_s": around(950)}})
    cmp = compare_runs(analyze_run(store, a), analyze_run(store, b))
    assert cmp["only_in_a"] == [["qemu-tcg", "stream", "triad_mb_s"]]
    assert cmp["only_in_b"] == [["native", "stream", "copy_mb_s"], ["qemu-kvm", "stream", "triad_mb_s"]]
    assert [r["environment"] for r in cmp["rows"]] == ["native"]


def test_differing_metadata_are_listed_with_a_warning(store_url):
    store = _store(store_url)
    md_a = {"accel": "kvm", "cpu_model": "host", "host_kernel": "6.1.0", "qemu_version": "7.2.0"}
    md_b = dict(md_a, accel="tcg", host_kernel="6.12.0")
    a = filled_run(store, {"qemu": md_a}, {"qemu": {"triad_mb_s": around(1000)}}, quick=True)
    b = filled_run(store, {"qemu": md_b}, {"qemu": {"triad_mb_s": around(1000)}}, quick=False,
                   host="otherhost")
    cmp = compare_runs(analyze_run(store, a), analyze_run(store, b))
    diffs = {(d["environment"], d["key"]): (d["a"], d["b"]) for d in cmp["metadata_differences"]}
    assert diffs == {(None, "quick"): (True, False), (None, "hostname"): ("testhost", "otherhost"),
                     ("qemu", "accelerator"): ("kvm", "tcg"),
                     ("qemu", "host kernel"): ("6.1.0", "6.12.0")}
    (warning,) = cmp["warnings"]
    assert "accelerator" in warning and "host kernel" in warning and "quick" in warning
    same = compare_runs(analyze_run(store, a), analyze_run(store, a))
    # nothing differs; the one warning says a run against itself is better read paired
    assert same["metadata_differences"] == []
    assert [w.split(":")[0] for w in same["warnings"]] == [f"A and B are the same run ({a})"]


def test_benchmark_parameters_that_differ_are_listed(store_url):
    store = _store(store_url)
    a = filled_run(store, {"native": {}}, {"native": {"triad_mb_s": around(1000)}})
    b = filled_run(store, {"native": {}}, {"native": {"triad_mb_s": around(1000)}})
    ra, rb = analyze_run(store, a), analyze_run(store, b)
    rb["benchmarks"][0]["params"] = {"elements": 100}
    keys = [d["key"] for d in compare_runs(ra, rb)["metadata_differences"]]
    assert keys == ["params of stream"]


def test_a_zero_in_run_a_gives_a_verdict_without_a_percentage(store_url):
    store = _store(store_url)
    a = filled_run(store, {"native": {}}, {"native": {"retransmits": [0.0] * 12}}, hib=False)
    b = filled_run(store, {"native": {}}, {"native": {"retransmits": around(50)}}, hib=False)
    (row,) = compare_runs(analyze_run(store, a), analyze_run(store, b))["rows"]
    assert row["change_pct"] is None and row["verdict"] == "worse"
    from virtbench.results.report import FORMATS, render_compare
    cmp = compare_runs(analyze_run(store, a), analyze_run(store, b))
    for fmt in FORMATS:
        assert "worse" in render_compare(cmp, fmt)
