"""perf kvm stat report, read from real reports (tests/fixtures/kvm/perf_kvm_stat, sources in each header)."""
from __future__ import annotations

from pathlib import Path

import pytest

from kvmfix import ROOT, fixture, header
from virtbench.machinery.exits.kvm_stat import (
    KvmProfileError,
    parse_perf_kvm_stat_report,
    read_perf_kvm_stat_report,
)
from virtbench.foundations.model.profile import ReasonRow


def test_every_fixture_names_its_source():
    for path in sorted(ROOT.rglob("*.txt")):
        head = header(str(path.relative_to(ROOT)))
        assert head.startswith("## Source:") and "## What it is:" in head, path


def test_intel_report_with_min_max_columns():
    rows = parse_perf_kvm_stat_report(fixture("perf_kvm_stat/intel_sysbench_vmexit.txt"))
    assert [r.reason for r in rows][:4] == ["MSR_WRITE", "EXTERNAL_INTERRUPT", "PREEMPTION_TIMER", "HLT"]
    assert rows[0] == ReasonRow(reason="MSR_WRITE", count=9167, share_pct=35.40, time_share_pct=0.04)
    hlt = next(r for r in rows if r.reason == "HLT")
    assert (hlt.count, hlt.share_pct, hlt.time_share_pct) == (2232, 8.62, 99.92)
    assert len(rows) == 9 and rows[-1] == ReasonRow(reason="EXCEPTION_NMI", count=4,
                                                    share_pct=0.02, time_share_pct=0.0)


def test_intel_report_footer_and_timings():
    rep = read_perf_kvm_stat_report(fixture("perf_kvm_stat/intel_sysbench_vmexit.txt"))
    assert rep.key == "VM-EXIT" and rep.scope == "Analyze events for all VMs, all VCPUs:"
    assert rep.total_samples == 25898 == sum(r.count for r in rep.rows)
    assert rep.total_time_us == pytest.approx(68281638.61)
    t = rep.timings["HLT"]
    assert (t.min_us, t.max_us, t.avg_us) == (0.56, 1001118.99, 30567.94)
    assert any("HLT: avg 30567.94 us, min 0.56 us, max 1001118.99 us" == n for n in rep.notes())


def test_first_format_without_min_max():
    rep = read_perf_kvm_stat_report(fixture("perf_kvm_stat/old_format_vmexit.txt"))
    assert rep.scope == "Analyze events for all VCPUs:"
    assert rep.rows[0] == ReasonRow(reason="APIC_ACCESS", count=65381, share_pct=66.58,
                                    time_share_pct=5.95)
    assert [r.reason for r in rep.rows][-1] == "CR_ACCESS" and len(rep.rows) == 9
    assert rep.total_samples == 98202 == sum(r.count for r in rep.rows)
    assert rep.timings["HLT"].avg_us == 8360.34 and rep.timings["HLT"].max_us is None


def test_vcpu_report_sorted_by_time_keeps_report_order():
    rows = parse_perf_kvm_stat_report(fixture("perf_kvm_stat/old_format_vcpu0_key_time.txt"))
    assert [r.reason for r in rows][:2] == ["HLT", "EXTERNAL_INTERRUPT"]
    assert sum(r.count for r in rows) == 10914


def test_mmio_and_ioport_variants():
    mmio = read_perf_kvm_stat_report(fixture("perf_kvm_stat/old_format_mmio.txt"))
    assert mmio.key == "MMIO Access"
    assert [r.reason for r in mmio.rows] == ["0xfee00380:W", "0xfee00300:R", "0xfee00310:W", "0xfee00300:W"]
    assert mmio.rows[3].time_share_pct == 82.50 and mmio.total_samples == 65057
    io = read_perf_kvm_stat_report(fixture("perf_kvm_stat/old_format_ioport.txt"))
    assert io.key == "IO Port Access"
    assert io.rows == [ReasonRow(reason="0xc090:POUT", count=383, share_pct=100.0,
                                 time_share_pct=100.0)]


def test_pvm_unknown_codes_are_named_by_their_code():
    rep = read_perf_kvm_stat_report(fixture("perf_kvm_stat/pvm_unknown_exit_codes.txt"))
    names = [r.reason for r in rep.rows]
    assert names == ["INVLPG", "UNKNOWN(131072)", "UNKNOWN(327680)", "UNKNOWN(196608)",
                     "UNKNOWN(262144)", "INVD", "UNKNOWN(65536)"]
    assert rep.rows[1] == ReasonRow(reason="UNKNOWN(131072)", count=3622, share_pct=13.15,
                                    time_share_pct=86.12)
    assert rep.total_samples == 27549 == sum(r.count for r in rep.rows)


def test_histogram_format_in_nanoseconds():
    rep = read_perf_kvm_stat_report(fixture("perf_kvm_stat/hist_format_riscv.txt"))
    assert rep.key == "Event name" and rep.total_samples is None
    assert rep.rows[0] == ReasonRow(reason="STORE_GUEST_PAGE_FAULT", count=26968, share_pct=54.0,
                                    time_share_pct=40.0)
    assert rep.rows[-1] == ReasonRow(reason="HYPERVISOR_SYSCALL", count=21, share_pct=0.0,
                                     time_share_pct=0.0)   # trailing space on that line
    t = rep.timings["LOAD_ACCESS"]
    assert (t.total_us, t.max_us, t.min_us, t.avg_us) == (671556.2, 4180.2, 100.7, 681.091)
    assert len(rep.rows) == 8


def test_empty_report_of_a_pvm_guest_on_this_host():
    rep = read_perf_kvm_stat_report(fixture("perf_kvm_stat/empty_report_pvm_host.txt"))
    assert rep.rows == [] and rep.total_samples == 0


@pytest.mark.parametrize("name", [None, "perf_errors/unknown_switch.txt", "kvm_exit/old_2013_trace_pipe.txt"])
def test_no_report_is_one_line_naming_the_fix(name):
    with pytest.raises(KvmProfileError) as err:
        read_perf_kvm_stat_report(fixture(name) if name else "")
    msg = str(err.value)
    assert "\n" not in msg and "perf kvm -i FILE stat report --event=vmexit" in msg
