"""The primitives benchmark: its parser on the kernel's real output, its families, what it
asks of an environment, its stamps, and the price-list rows built from analysed results."""
import json

import pytest

from virtbench.measure.benchmarks import REGISTRY, ParseError
from virtbench.measure.benchmarks.primitives import FAMILIES, families_of
from virtbench.core.capabilities import Capabilities, can
from virtbench.core.errors import VirtbenchError
from virtbench.study.design import default_label

PRIM = REGISTRY["primitives"]
LOOPS_AND_TIMER = {"syscall_ns", "clock_gettime_ns", "rdtsc_ns", "cpuid_ns", "pagefault_4k_ns",
                   "pagefault_thp_ns", "mmap_munmap_ns", "ctxsw_same_cpu_ns",
                   "ctxsw_cross_cpu_ns", "futex_cross_cpu_ns", "timer_p50_us", "timer_p99_us",
                   "timer_max_us", "memlat_l1_4k_ns", "memlat_l2_4k_ns", "memlat_llc_4k_ns",
                   "memlat_llc4x_4k_ns", "memlat_l1_2m_ns", "memlat_l2_2m_ns",
                   "memlat_llc_2m_ns", "memlat_llc4x_2m_ns"}


def test_the_issues_metric_names():
    names = {m.name for m in PRIM.metrics}
    assert names == LOOPS_AND_TIMER | {"ioport_out_ns", "mmio_read_ns"}
    assert all(not m.higher_is_better for m in PRIM.metrics)
    assert {m.unit for m in PRIM.metrics} == {"ns", "us"}


def test_parser_on_a_real_native_run(fixture_text):
    text = fixture_text("kernels", "primitives-native-quick.stdout")
    values = PRIM.parse(text)
    assert set(values) == LOOPS_AND_TIMER
    raw = json.loads(text)["results"]
    assert values == {k: raw[k]["value"] for k in values}
    assert values["cpuid_ns"] > values["rdtsc_ns"] > 0
    assert values["timer_p50_us"] <= values["timer_p99_us"] <= values["timer_max_us"]
    assert PRIM.extra_warnings(text) == []


def test_skipped_metrics_are_left_out_and_said_why(fixture_text):
    text = fixture_text("kernels", "primitives-cpus1.stdout")
    values = PRIM.parse(text)
    assert "ctxsw_same_cpu_ns" in values and "ctxsw_cross_cpu_ns" not in values
    assert PRIM.extra_warnings(text) == [
        ("primitives-skipped", "ctxsw_cross_cpu_ns: --cpus 1: one CPU asked for"),
        ("primitives-skipped", "futex_cross_cpu_ns: --cpus 1: one CPU asked for")]


def test_a_failed_primitive_fails_the_trial_but_keeps_what_was_measured(fixture_text):
    text = fixture_text("kernels", "primitives-as-limit.stdout")   # under prlimit --as=20 MB
    with pytest.raises(ParseError, match="pagefault_4k_ns: mapping fresh pages: Cannot "
                                         "allocate memory") as err:
        PRIM.parse(text)
    assert set(err.value.partial) == {"syscall_ns", "clock_gettime_ns", "rdtsc_ns", "cpuid_ns",
                                      "mmap_munmap_ns"}
    assert PRIM.evidence(text) == err.value.partial


@pytest.mark.parametrize("text, words", [
    ("", "no JSON result line"),
    ('{"kernel":"stream"}', "not a primitives result"),
    ('{"kernel":"primitives"}', "no results"),
    ('{"kernel":"primitives","results":{},"failed":{}}', "no primitive was measured"),
    ('{"kernel":"primitives","results":{"syscall_ns":{"value":"x"}}}', "'value'"),
])
def test_garbage_is_a_parse_error(text, words):
    with pytest.raises(ParseError, match=words):
        PRIM.parse(text)


def test_each_family_section_is_the_block_of_its_metrics(fixture_text):
    text = fixture_text("kernels", "primitives-native-quick.stdout")
    sections = json.loads(text)["sections"]
    timing = PRIM.timing(text)
    assert set(timing.spans) == LOOPS_AND_TIMER
    for fam, metrics in FAMILIES.items():
        for name, _, _ in metrics:
            if name in timing.spans:
                [span] = timing.spans[name]
                assert (span.start, span.end) == tuple(sections[fam])
    assert timing.late_s is None and PRIM.timing("garbage") is None


def test_families_and_their_order():
    assert families_of("all") == ("syscall", "pagefault", "ctxsw", "timer", "memlat")
    assert families_of("timer,syscall") == ("syscall", "timer")
    assert families_of(" memlat , ioport") == ("memlat", "ioport")
    for bad in ("", "bogus", "syscall,bogus", ","):
        with pytest.raises(VirtbenchError, match="only="):
            families_of(bad)


def test_params_check_and_label():
    assert PRIM.params()["only"] == "all"
    quick = PRIM.params(quick=True)
    assert quick["target_ms"] < PRIM.defaults["target_ms"] and quick["timer_samples"] == 200
    assert default_label("primitives", PRIM.params({"only": "syscall,timer"})) == \
        "primitives[only=syscall,timer]"
    for bad in ({"only": "nope"}, {"repeats": 0}, {"target_ms": 0.0}, {"processes": 3},
                {"timer_samples": 0}):
        with pytest.raises(VirtbenchError, match="benchmark primitives"):
            PRIM.params(bad)


class Env:
    def __init__(self, root_io: bool):
        self.caps = Capabilities.none("test")
        if root_io:
            self.caps = self.caps.with_(guest_root_io=can("port 0xed"))

    def capabilities(self):
        return self.caps

    def kernel_path(self, name):
        return f"/k/{name}"


def test_ioport_joins_all_only_where_the_environment_offers_it():
    params = PRIM.params()
    native, guest = PRIM.argv(params, Env(False)), PRIM.argv(params, Env(True))
    assert native[:3] == ["/k/primitives", "--only", "syscall,pagefault,ctxsw,timer,memlat"]
    assert guest[2] == "syscall,pagefault,ctxsw,timer,memlat,ioport"
    assert native[3:] == ["--cpus", "2", "--target-ms", "10", "--repeats", "5",
                          "--timer-samples", "1000"]
    explicit = PRIM.params({"only": "ioport"})
    assert PRIM.requirements(explicit) == ("guest_root_io",)
    assert PRIM.requirements(params) == ()
    assert PRIM.argv(explicit, Env(True))[2] == "ioport"
    assert PRIM.slots_needed(params) == 6 and PRIM.slots_needed(explicit) == 1


def test_parser_on_a_real_tcg_guest_run_with_the_exits(fixture_text):
    """Captured in virtbench's TCG guest (one vCPU): the ioport family ran (root in a guest),
    the cross-CPU figures are skipped with the reason."""
    text = fixture_text("kernels", "primitives-tcg-quick.stdout")
    values = PRIM.parse(text)
    assert {"ioport_out_ns", "mmio_read_ns", "cpuid_ns"} <= set(values)
    assert "ctxsw_cross_cpu_ns" not in values
    raw = json.loads(text)
    assert raw["io"] == {"port": "0xed", "mmio": "HPET main counter through /dev/hpet",
                         "hpet_vendor": "0x8086"}
    assert raw["families"][-1] == "ioport"
    assert ("primitives-skipped", "ctxsw_cross_cpu_ns: this environment gives the process one "
            "CPU") in PRIM.extra_warnings(text)


def test_a_clock_read_that_is_a_system_call_is_said(fixture_text):
    """Two vCPUs under TCG: the guest's TSC is unstable, its clocksource hpet, and every
    clock_gettime a system call plus an HPET read (Zhang's experiment, by accident)."""
    two = fixture_text("kernels", "primitives-tcg-2vcpu-quick.stdout")
    assert json.loads(two)["clocksource"] == "hpet"
    assert PRIM.extra_warnings(two) == [(
        "primitives-clocksource", "clocksource hpet: clock_gettime is a system call here (the "
        "vDSO reads only tsc-based clocksources), plus a read of the device")]
    assert {"ctxsw_cross_cpu_ns", "futex_cross_cpu_ns"} <= set(PRIM.parse(two))
    one = fixture_text("kernels", "primitives-tcg-quick.stdout")
    assert not [w for w in PRIM.extra_warnings(one) if w[0] == "primitives-clocksource"]
