"""Tests of the primitives kernel (kernels/primitives.c): its arithmetic, not its speed.

Each metric is a calibrated loop (the median loop time over the operations it held), the
pointer chase visits every line of one random cycle once per lap, the page fault figures
count one fault per page, the timer percentiles are nearest ranks of its samples. The ioport
family is never run here: it writes an I/O port, which only a guest may (its parser is tested
on output captured in a TCG guest, tests/unit/benchmarks/test_primitives.py)."""
import json
import statistics
import time

import numpy as np
import pytest

from virtbench.machinery.kernels.build import source_dir

from test_c_kernels import assert_contract, assert_usage_error

QUICK = ["--target-ms", "1", "--repeats", "3", "--timer-samples", "60"]
LOOP_DIVISOR = {"ctxsw_same_cpu_ns": 2, "ctxsw_cross_cpu_ns": 2, "futex_cross_cpu_ns": 2}
DEFAULT_FAMILIES = ["syscall", "pagefault", "ctxsw", "timer", "memlat"]


@pytest.fixture(scope="module")
def full(run_kernel):
    """One run of every default family, with the timer's samples."""
    run = run_kernel("primitives", *QUICK, "--samples", timeout=300)
    return assert_contract(run)


def test_one_json_line_with_the_default_families_and_no_port_written(full):
    assert full["kernel"] == "primitives" and full["ok"] is True
    assert full["families"] == DEFAULT_FAMILIES          # ioport only when asked for
    assert "ioport_out_ns" not in full["results"] and "io" not in full
    assert full["failed"] == {}
    assert set(full["sections"]) == set(DEFAULT_FAMILIES)
    starts = [full["sections"][f][0] for f in DEFAULT_FAMILIES]
    assert starts == sorted(starts)                       # run in the documented order
    for start, end in full["sections"].values():
        assert end >= start


def test_every_loop_metric_is_the_median_loop_over_its_operations(full):
    loops = {k: v for k, v in full["results"].items() if "runs_s" in v}
    assert {"syscall_ns", "cpuid_ns", "pagefault_4k_ns", "mmap_munmap_ns",
            "ctxsw_same_cpu_ns", "memlat_l1_4k_ns"} <= set(loops)
    for name, r in loops.items():
        assert len(r["runs_s"]) == full["repeats"] == 3, name
        per_op = statistics.median(r["runs_s"]) / (r["ops"] * LOOP_DIVISOR.get(name, 1)) * 1e9
        assert r["value"] == pytest.approx(per_op, rel=1e-5), name
        assert r["unit"] == "ns"
        # calibration grew the loop until one lasted the target (or its cap stopped it)
        assert r["calibrated_s"] >= full["target_s"] or r["short"] is True, name


def test_timer_percentiles_are_nearest_ranks_of_the_samples(full):
    samples = np.array(full["timer"]["samples_us"])
    assert len(samples) == full["timer"]["samples"] == 60
    assert (samples >= 0).all()               # an absolute sleep never returns before its time
    for name, p in (("timer_p50_us", 50), ("timer_p99_us", 99), ("timer_max_us", 100)):
        expect = np.percentile(samples, p, method="inverted_cdf")   # nearest rank
        # samples are printed to 1 ns, the percentile to 9 significant digits
        assert full["results"][name]["value"] == pytest.approx(expect, abs=1.5e-3), name
        assert full["results"][name]["unit"] == "us"


def test_memlat_working_sets_follow_the_caches_and_each_chain_is_one_cycle(full):
    caches = full["caches"]
    want = {"l1": caches["l1d"] // 2, "l2": caches["l2"] // 2, "llc": caches["llc"] // 2,
            "llc4x": caches["llc"] * 4}
    for key, note in full["memlat"].items():
        ws, pages = key.split("_")
        assert note["bytes"] == want[ws] // 64 * 64, key
        assert note["lines"] == note["bytes"] // 64
        name = f"memlat_{key}_ns"
        if name in full["results"]:
            assert note["cycle_length"] == note["lines"], key   # every line, once per lap
        else:
            assert "huge pages" in full["skipped"][name]
        if pages == "4k":                     # one fault per 4 KiB page of the first touch
            assert note["first_touch_faults"] >= note["bytes"] // 4096


def test_page_faults_are_one_per_page_and_huge_ones_are_checked(full):
    pf = full["pagefault"]
    assert pf["faults_per_4k_page"] == pytest.approx(1.0, abs=0.05)
    if "pagefault_thp_ns" in full["results"]:
        assert pf["faults_per_2m_page"] == pytest.approx(1.0, abs=0.05)
    else:           # 4 KiB pages instead: one fault for each of the two touches per 2 MiB
        assert "not granted" in full["skipped"]["pagefault_thp_ns"]
        assert pf["faults_per_2m_page"] == pytest.approx(2.0, abs=0.1)


def test_cross_cpu_figures_need_two_cpus(run_kernel, full):
    if full["cpus"] >= 2:
        assert {"ctxsw_cross_cpu_ns", "futex_cross_cpu_ns"} <= set(full["results"])
        assert 0 < full["ctxsw"]["futex_slept_share"] <= 1
    one = assert_contract(run_kernel("primitives", "--only", "ctxsw", "--cpus", "1", *QUICK))
    assert set(one["results"]) == {"ctxsw_same_cpu_ns"}
    assert set(one["skipped"]) == {"ctxsw_cross_cpu_ns", "futex_cross_cpu_ns"}
    assert one["cpu_b"] == -1
    assert one["ctxsw"]["pipe_overhead_ns"] > 0


@pytest.mark.parametrize("lines", [2, 3, 17, 1000, 4096])
def test_the_chase_visits_every_line_of_one_random_cycle_once(run_kernel, lines):
    out = assert_contract(run_kernel("primitives", "--dump-chase", lines))
    nxt = out["next"]
    assert out["lines"] == lines == len(nxt) and out["cycle_length"] == lines
    assert sorted(nxt) == list(range(lines))               # a permutation of the lines
    seen, at = set(), 0
    for _ in range(lines):
        seen.add(at)
        at = nxt[at]
    assert at == 0 and seen == set(range(lines))            # one cycle through all of them
    if lines >= 1000:                                       # random, not a stride
        assert sum(nxt[i] == i + 1 for i in range(lines - 1)) < lines // 50


def test_only_picks_families_in_the_kernels_order(run_kernel):
    out = assert_contract(run_kernel("primitives", "--only", "timer,syscall", *QUICK))
    assert out["families"] == ["syscall", "timer"]
    assert set(out["results"]) == {"syscall_ns", "clock_gettime_ns", "rdtsc_ns", "cpuid_ns",
                                   "timer_p50_us", "timer_p99_us", "timer_max_us"}
    assert "samples_us" not in out["timer"]                 # only with --samples


def test_start_at_and_slots_start_each_family_at_its_moment(run_kernel):
    at, slot = time.monotonic() + 0.5, 0.4
    out = assert_contract(run_kernel("primitives", "--only", "syscall,timer", "--target-ms",
                                     "1", "--repeats", "1", "--timer-samples", "20",
                                     "--start-at", f"{at:.6f}", "--slot", str(slot)))
    assert out["start_at"] == pytest.approx(at, abs=1e-6) and out["slot_s"] == slot
    for index, family in enumerate(("syscall", "timer")):
        start = out["sections"][family][0]
        due = at + index * slot        # never early; late only by as much as it says
        assert due - 1e-6 <= start <= due + max(out["slot_late_s"], out["late_s"]) + 1e-6, family
    plain = assert_contract(run_kernel("primitives", "--only", "syscall", *QUICK))
    assert plain["start_at"] is None and plain["slot_s"] is None


@pytest.mark.parametrize("args", [
    ["--only", "bogus"], ["--only", ""], ["--only", "syscall,nope"], ["--only"],
    ["--repeats", "0"], ["--repeats", "51"], ["--target-ms", "0"], ["--target-ms", "x"],
    ["--cpus", "3"], ["--cpus", "0"], ["--timer-samples", "0"], ["--slot", "0.1"],
    ["--start-at", "-1"], ["--dump-chase", "1"], ["--bogus"], ["extra"],
])
def test_bad_arguments(run_kernel, args):
    assert_usage_error(run_kernel("primitives", *args))


def test_the_kernel_names_the_benchmarks_metrics():
    """Every metric the kernel can print is a metric of the benchmark, and back."""
    import re
    from virtbench.measure.benchmarks.primitives import FAMILIES
    src = (source_dir() / "primitives.c").read_text()
    table = src[src.index("static const struct metric_def METRICS"):]
    table = table[:table.index("};")]
    in_c = re.findall(r'\{"(\w+)", F_(\w+), "(\w+)"\}', table)
    ours = [(name, fam.upper(), unit) for fam, ms in FAMILIES.items() for name, unit, _ in ms]
    assert in_c == ours
    assert len(in_c) == 23


@pytest.mark.parametrize("listing", ["ioports-qemu-q35.txt", "ioports-qemu-pc.txt",
                                     "ioports-devvm.txt"])
def test_port_0xed_is_given_to_nothing_in_real_ioports_listings(run_kernel, listing):
    """The ioport family writes 0xed only when the guest's /proc/ioports gives it to nothing:
    in QEMU's q35 and pc machines only the PCI host bridge's window (0000-0cf7) spans it,
    while 0x80 beside it is a device's (dma page reg)."""
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "kernels" / listing
    out = assert_contract(run_kernel("primitives", "--port-claimed", str(path)))
    assert out["port"] == "0xed" and out["claimed"] is False and out["claimed_0x80"] is True
    missing = assert_contract(run_kernel("primitives", "--port-claimed", "/nonexistent"))
    assert missing["claimed"] is None                       # cannot tell: then it never writes
