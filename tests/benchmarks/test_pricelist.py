"""The price-list rows and family sentences, from analysed results (pure)."""
from virtbench.benchmarks.pricelist import family_sentences, price_list


def row(env, metric, mean, ratio=None, bench="primitives", unit="ns"):
    return {"environment": env, "benchmark": bench, "metric": metric, "unit": unit,
            "trimmed_mean": mean,
            "vs_baseline": None if ratio is None else {"ratio": ratio, "verdict": "worse"}}


RESULTS = [
    row("native", "cpuid_ns", 100.0), row("qemu", "cpuid_ns", 30000.0, 300.0),
    row("native", "syscall_ns", 200.0), row("qemu", "syscall_ns", 1000.0, 5.0),
    row("native", "timer_p99_us", 20.0, unit="us"),
    row("qemu", "timer_p99_us", 400.0, 20.0, unit="us"),
    row("native", "memlat_l1_4k_ns", 1.2), row("qemu", "memlat_l1_4k_ns", 0.1, 0.08),
    row("native", "stream_thing", 1.0),                       # not a primitive: left out
    row("native", "cpuid_ns", 5.0, bench="himeno"),          # another case: left out
]


def test_rows_follow_the_families_and_hold_each_environments_cell():
    rows = price_list(RESULTS)
    assert [r["metric"] for r in rows] == ["syscall_ns", "cpuid_ns", "timer_p99_us",
                                           "memlat_l1_4k_ns"]
    assert [r["family"] for r in rows] == ["syscall", "syscall", "timer", "memlat"]
    cpuid = rows[1]
    assert cpuid["cells"]["native"] == {"value": 100.0, "ratio": None, "verdict": None}
    assert cpuid["cells"]["qemu"]["ratio"] == 300.0 and cpuid["unit"] == "ns"
    assert "cpuid" in cpuid["description"]
    assert rows[2]["unit"] == "us"
    assert price_list(RESULTS, benchmark="primitives[only=syscall]") == []


def test_one_sentence_per_family_says_how_far_above_the_baseline():
    said = family_sentences(price_list(RESULTS), "qemu", "native")
    assert said["syscall"] == ("syscall: qemu costs 5x (syscall_ns) to 300x (cpuid_ns) of "
                               "native; 1 of 2 at least an order of magnitude above (up to 2.5 "
                               "orders: cpuid_ns)")
    assert said["timer"].startswith("timer: qemu costs 20x (timer_p99_us) of native; 1 of 1")
    assert said["memlat"].endswith("none an order of magnitude above; an order of magnitude "
                                   "below: memlat_l1_4k_ns")
    assert set(said) == {"syscall", "timer", "memlat"}
    base = family_sentences(price_list(RESULTS), "native", "native")
    assert base["syscall"].startswith("syscall: native has no figure of native to compare with")
