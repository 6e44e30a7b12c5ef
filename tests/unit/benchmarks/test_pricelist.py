"""The price-list rows and family sentences, from analysed results (pure)."""
from pathlib import Path

from virtbench.measure.benchmarks.pricelist import (
    EXIT_REASONS,
    exits_of,
    family_sentences,
    family_summary,
    price_list,
)
from virtbench.measure.benchmarks.primitives import METRIC_FAMILY
from virtbench.machinery.exits.kvm_stat import parse_perf_kvm_stat_report


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


# -- the exits each primitive causes, on real exit profiles ----------------------------------
KVM_STAT = Path(__file__).resolve().parents[2] / "fixtures" / "kvm" / "perf_kvm_stat"


def _reasons(name):
    return [{"reason": r.reason, "count": r.count, "share_pct": r.share_pct}
            for r in parse_perf_kvm_stat_report((KVM_STAT / name).read_text())]


def test_exits_are_linked_by_svm_names_on_a_real_amd_profile():
    svm = _reasons("nested_svm_acpi_pm.txt")         # io, msr, interrupt, cpuid, vintr, hlt, npf
    assert exits_of("cpuid_ns", svm) == [("cpuid", 35, 0.72)]
    assert exits_of("ioport_out_ns", svm) == [("io", 3475, 71.34)]
    assert [r for r, _, _ in exits_of("timer_p99_us", svm)] == ["msr", "interrupt", "vintr",
                                                                "hlt"]
    assert [r for r, _, _ in exits_of("mmio_read_ns", svm)] == ["npf"]
    assert [r for r, _, _ in exits_of("pagefault_4k_ns", svm)] == ["npf"]
    assert exits_of("syscall_ns", svm) == [] and exits_of("rdtsc_ns", svm) == []
    assert exits_of("memlat_llc4x_4k_ns", svm) == []


def test_exits_are_linked_by_vmx_names_on_a_real_intel_profile():
    vmx = _reasons("intel_sysbench_vmexit.txt")
    assert exits_of("cpuid_ns", vmx) == [("CPUID", 2160, 8.34)]
    assert [r for r, _, _ in exits_of("timer_p50_us", vmx)] == [
        "MSR_WRITE", "EXTERNAL_INTERRUPT", "PREEMPTION_TIMER", "HLT", "EOI_INDUCED"]
    assert [r for r, _, _ in exits_of("mmio_read_ns", vmx)] == ["EPT_MISCONFIG"]
    assert exits_of("ioport_out_ns", vmx) == []             # sysbench wrote no port


def test_tcg_would_be_exits_link_ports_mmio_and_the_apic_but_never_cpuid():
    tcg = [{"reason": "pio", "count": 12, "share_pct": 10.0},
           {"reason": "mmio", "count": 100, "share_pct": 83.3},
           {"reason": "apic", "count": 8, "share_pct": 6.7}]
    assert exits_of("ioport_out_ns", tcg) == [("pio", 12, 10.0)]
    assert exits_of("mmio_read_ns", tcg) == [("mmio", 100, 83.3)]
    assert exits_of("timer_max_us", tcg) == [("apic", 8, 6.7)]
    assert exits_of("cpuid_ns", tcg) == []
    assert set(EXIT_REASONS) <= set(METRIC_FAMILY)


# -- one sentence per family across the environments -----------------------------------------
MANY = RESULTS + [
    row("gvisor", "syscall_ns", 6000.0, 30.0), row("gvisor", "cpuid_ns", 100.0, 1.0),
    row("ctr", "syscall_ns", 210.0, 1.05), row("ctr", "cpuid_ns", 99.0, 0.99),
    row("qemu", "ioport_out_ns", 70.0),
]


def test_family_summary_says_which_environments_are_orders_above_and_which_are_not():
    said = family_summary(price_list(MANY), ["native", "qemu", "gvisor", "ctr"], "native")
    assert said["syscall"] == (
        "syscall: an order of magnitude or more above native: qemu (cpuid_ns 300x); gvisor "
        "(syscall_ns 30x); within one order: qemu for the rest, 5x, gvisor for the rest, 1x, "
        "ctr 0.99x-1.05x")
    assert said["memlat"] == ("memlat: nothing an order of magnitude above native; within one "
                              "order: qemu 0.08x; an order of magnitude below: memlat_l1_4k_ns "
                              "in qemu (0.08x)")
    assert said["ioport"] == ("ioport: no figure of native to compare with (qemu measured it)")
    assert said["timer"].startswith("timer: an order of magnitude or more above native: qemu "
                                    "(timer_p99_us 20x)")
    assert "native" not in said["timer"].split("above native")[1]    # the baseline: no column
    assert list(said) == ["syscall", "timer", "memlat", "ioport"]
