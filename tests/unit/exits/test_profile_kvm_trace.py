"""kvm_exit/kvm_entry tracepoint lines, read from real traces (tests/fixtures/kvm/kvm_exit)."""
from __future__ import annotations

import pytest

from kvmfix import fixture
from virtbench.machinery.exits.kvm_trace import parse_kvm_exit_lines, parse_kvm_pio_lines, pio_note, unwrap
from virtbench.foundations.model.profile import FunctionRow, ReasonRow


def test_older_format_wrapped_as_mailed_counts_by_reason_and_rip():
    trace = parse_kvm_exit_lines(fixture("kvm_exit/qemu_pckbd_trace_pipe.txt"))
    assert trace.by_reason == {"IO_INSTRUCTION": 6, "EXTERNAL_INTERRUPT": 3, "PENDING_INTERRUPT": 1}
    assert trace.by_rip == {0x22da: 3, 0x110c8c: 2, 0x110c8d: 1, 0xce93: 1, 0xceca: 1, 0xe828: 1, 0xe82a: 1}
    assert {e.stream for e in trace.exits} == {"5665"}


def test_exit_entry_pairs_give_time_per_reason():
    trace = parse_kvm_exit_lines(fixture("kvm_exit/qemu_pckbd_trace_pipe.txt"))
    # every exit but the last IO_INSTRUCTION (0xceca) has its kvm_entry on thread 5665
    assert trace.paired == 9
    assert trace.time_by_reason_s["IO_INSTRUCTION"] == pytest.approx(132e-6, abs=1e-9)
    assert trace.time_by_reason_s["EXTERNAL_INTERRUPT"] == pytest.approx(2e-6, abs=1e-9)
    assert trace.time_by_reason_s["PENDING_INTERRUPT"] == pytest.approx(1e-6, abs=1e-9)
    rows = trace.reason_rows()
    assert rows[0] == ReasonRow(reason="IO_INSTRUCTION", count=6, share_pct=60.0, time_share_pct=97.78)
    assert [r.reason for r in rows] == ["IO_INSTRUCTION", "EXTERNAL_INTERRUPT", "PENDING_INTERRUPT"]


def test_port_io_exits_name_their_port():
    trace = parse_kvm_exit_lines(fixture("kvm_exit/qemu_pckbd_trace_pipe.txt"))
    rows = {r.address: r for r in trace.function_rows()}
    assert rows["0x110c8c"] == FunctionRow(address="0x110c8c", function=None, caller=None, count=2,
                                           share_pct=20.0, device="port 0x64")
    assert rows["0xce93"].device == rows["0xceca"].device == "port 0x60"   # PS/2 data port
    assert rows["0xe828"].device == "port 0xa0" and rows["0xe82a"].device == "port 0x20"  # PIC EOIs
    assert rows["0x22da"].device is None and rows["0x22da"].count == 3
    assert list(rows)[0] == "0x22da"                 # most exits first


def test_symbolise_fills_function_and_caller():
    trace = parse_kvm_exit_lines(fixture("kvm_exit/qemu_pckbd_trace_pipe.txt"))
    seen = []

    def symbolise(address: int):
        seen.append(address)
        return ("seabios_mouse_isr+0x3", "irq_handler") if address == 0xce93 else None

    rows = {r.address: r for r in trace.function_rows(symbolise, top=3)}
    assert len(rows) == 3 and set(seen) == {0x22da, 0x110c8c, 0xce93}   # ties: lower address first
    rows = {r.address: r for r in trace.function_rows(symbolise)}
    assert (rows["0xce93"].function, rows["0xce93"].caller) == ("seabios_mouse_isr+0x3", "irq_handler")
    assert rows["0xceca"].function is None


def test_newer_format_and_nested_vmexit_not_counted():
    trace = parse_kvm_exit_lines(fixture("kvm_exit/nested_ept_newformat.txt"))
    assert trace.by_reason == {"EPT_VIOLATION": 3, "EXCEPTION_NMI": 1}   # kvm_nested_vmexit lines left out
    assert trace.by_rip == {0x1: 4}
    assert [e.vcpu for e in trace.exits] == [0, 0, 0, 0]
    assert trace.exits[1].info1 == 0x181 and trace.exits[0].time_s == 140.314684
    assert trace.paired == 2
    assert trace.time_by_reason_s["EXCEPTION_NMI"] == pytest.approx(4e-6, abs=1e-9)


@pytest.mark.parametrize("part, reasons, paired", [
    (0, {"vintr": 1, "msr": 1}, 1),
    (1, {"hlt": 1, "vintr": 1, "msr": 1}, 2),
])
def test_amd_svm_names_without_task_or_cpu(part, reasons, paired):
    text = fixture("kvm_exit/amd_idle_hlt.txt").split("Without idle halt enabled")[part]
    trace = parse_kvm_exit_lines(text)
    assert trace.by_reason == reasons and trace.paired == paired
    assert {e.stream for e in trace.exits} == {"vcpu 0"}


def test_amd_npf_wrapped_after_rip_three_threads():
    text = fixture("kvm_exit/amd_npf_three_vcpus.txt")
    assert len(unwrap(text)) == len(text.splitlines()) - 3      # the three kvm_exit records
    trace = parse_kvm_exit_lines(text)
    assert trace.by_reason == {"npf": 3}
    assert trace.by_rip == {0xfd11d: 3}
    assert sorted((e.stream, e.vcpu) for e in trace.exits) == [("35787", 1), ("35788", 2), ("35789", 3)]
    assert trace.exits[0].info1 == 0x100000014 and trace.exits[0].port is None
    assert trace.reason_rows() == [ReasonRow(reason="npf", count=3, share_pct=100.0,
                                             time_share_pct=None)]   # no kvm_entry: no time


def test_perf_script_records():
    trace = parse_kvm_exit_lines(fixture("kvm_exit/perf_script_triple_fault.txt"))
    assert [(e.reason, e.rip, e.vcpu, e.time_s) for e in trace.exits] == [
        ("TRIPLE_FAULT", 0x100146, 0, 770.850307)]


def test_first_kernels_lowercase_reasons_without_info():
    trace = parse_kvm_exit_lines(fixture("kvm_exit/old_2013_trace_pipe.txt"))
    assert trace.by_reason == {"apic_access": 1, "io_instruction": 1}
    assert trace.by_rip == {0xc011518c: 1, 0xc01e4473: 1}
    assert trace.paired == 2
    assert trace.time_by_reason_s["io_instruction"] == pytest.approx(5e-6, abs=1e-9)


def test_text_without_kvm_exit_gives_an_empty_trace():
    trace = parse_kvm_exit_lines(fixture("perf_kvm_stat/intel_sysbench_vmexit.txt"))
    assert trace.exits == [] and trace.reason_rows() == [] and trace.function_rows() == []


def test_pvm_host_has_no_kvm_exit_records():
    trace = parse_kvm_exit_lines(fixture("kvm_exit/pvm_host_perf_script.txt"))
    assert trace.exits == [] and trace.paired == 0


def test_pvm_host_ports_from_kvm_pio():
    pio = parse_kvm_pio_lines(fixture("kvm_exit/pvm_host_perf_script.txt"))
    assert sum(pio.values()) == 213
    assert pio[(0x64, "read")] == 43 and pio[(0xcf8, "write")] == 17 and pio[(0x70, "read")] == 9
    assert pio_note(pio, top=2) == ["port I/O by port (kvm:kvm_pio, 213 records): 0x64 read 43, 0x60 write 17"]
    assert pio_note(parse_kvm_pio_lines(fixture("kvm_exit/nested_ept_newformat.txt"))) == []
