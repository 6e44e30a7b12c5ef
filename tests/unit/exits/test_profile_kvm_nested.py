"""virtbench's KVM readers on real outputs from THIS machine: KVM nested in a TCG guest with AMD-V
(tests/fixtures/kvm/*nested_svm*, captured by tests/live/nested/capture_kvm.py; perf 6.1, QEMU 7.2,
Linux 6.1 kvm_amd). An inner guest with clocksource=acpi_pm ran the pi kernel under a profiled
trial: perf kvm stat, perf script of kvm_exit/kvm_pio, query-stats, the probe's console. The
guest's own Profile of that trial is kept too: recomputed here, it must come out the same."""
import json
import re
from collections import Counter

from kvmfix import fixture, header, reparse_profile

from virtbench.measure.environments.qemu.vmm.kvm_probe import probe_verdict
from virtbench.machinery.exits import kvm, symbols
from virtbench.foundations.model.profile import ReasonRow

REPORT = fixture("perf_kvm_stat/nested_svm_acpi_pm.txt")
SCRIPT = fixture("kvm_exit/nested_svm_acpi_pm_perf_script.txt.gz")
KALLSYMS = fixture("nested_svm/kallsyms_excerpt.txt")
FORMAT = fixture("nested_svm/kvm_exit_format.txt")
PM_TIMER = 0x608                 # ICH9's ACPI PM timer port (q35)
ACPI_PM_READ_IN = 0xffffffff8179aa2b


def svm_names() -> set[str]:
    return set(re.findall(r'\{ 0x[0-9a-f]+, "(\w+)" \}', FORMAT))


def test_headers_say_where_they_come_from():
    for name in ("perf_kvm_stat/nested_svm_acpi_pm.txt", "kvm_exit/nested_svm_acpi_pm_perf_script.txt.gz",
                 "query_stats/nested_svm_vcpu_before.txt", "probe/nested_svm_console.txt"):
        h = header(name)
        assert "TCG guest" in h and "-cpu EPYC,+svm" in h and "perf version 6.1" in h \
            and "QEMU emulator version 7.2" in h, name


def test_perf_kvm_stat_report_of_a_nested_svm_guest():
    report = kvm.read_perf_kvm_stat_report(REPORT)       # perf 6.1 wrote it on stderr
    assert report.key == "VM-EXIT" and report.scope == "Analyze events for all VMs, all VCPUs:"
    assert report.rows == [ReasonRow(reason="io", count=3475, share_pct=71.34,
                                     time_share_pct=73.57),
                           ReasonRow(reason="msr", count=683, share_pct=14.02,
                                     time_share_pct=16.75),
                           ReasonRow(reason="interrupt", count=647, share_pct=13.28,
                                     time_share_pct=7.13),
                           ReasonRow(reason="cpuid", count=35, share_pct=0.72, time_share_pct=0.15),
                           ReasonRow(reason="vintr", count=27, share_pct=0.55, time_share_pct=0.62),
                           ReasonRow(reason="hlt", count=3, share_pct=0.06, time_share_pct=1.05),
                           ReasonRow(reason="npf", count=1, share_pct=0.02, time_share_pct=0.72)]
    assert (report.total_samples, report.total_time_us) == (4871, 858436.09)
    assert sum(r.count for r in report.rows) == report.total_samples
    io = report.timings["io"]
    assert (io.min_us, io.max_us, io.avg_us) == (0.0, 5050.37, 181.75)
    assert {r.reason for r in report.rows} <= svm_names()     # the kernel's own SVM names


def test_kvm_exit_records_with_svm_names_rips_and_the_pm_timer_port():
    trace = kvm.parse_kvm_exit_lines(SCRIPT)
    assert trace.by_reason == Counter({"io": 3659, "msr": 735, "interrupt": 651, "cpuid": 35,
                                       "vintr": 34, "hlt": 18, "npf": 1})
    assert set(trace.by_reason) <= svm_names()
    assert {e.stream for e in trace.exits} == {"368"} and {e.vcpu for e in trace.exits} == {0}
    io = [e for e in trace.exits if e.reason == "io"]
    assert {(e.rip, e.port) for e in io} == {(ACPI_PM_READ_IN, PM_TIMER)}   # port from info1
    assert trace.paired == 0 and trace.time_by_reason_s == {}   # no kvm_entry was recorded
    # each of those exits went to QEMU, which emulates the timer: one kvm_pio read apiece
    assert kvm.parse_kvm_pio_lines(SCRIPT) == Counter({(PM_TIMER, "read"): 3659})
    # the same exits as perf kvm stat's, reason by reason (it drops a few it cannot pair)
    report = kvm.read_perf_kvm_stat_report(REPORT)
    for row in report.rows:
        if row.count >= 100:
            assert row.count <= trace.by_reason[row.reason] <= 1.1 * row.count, row


def test_exit_rips_symbolised_with_the_guests_kallsyms():
    table = symbols.parse_kallsyms(KALLSYMS)
    assert symbols.function_or_user_space(table, ACPI_PM_READ_IN) == ("acpi_pm_read+0xb", None)
    assert symbols.function_or_user_space(table, 0xffffffff8107e914) == ("native_write_msr+0x4", None)
    # the pi program's own addresses: user space, which kallsyms cannot name
    assert symbols.function_or_user_space(table, 0x424050) == (symbols.USER_SPACE, None)
    assert symbols.function_and_caller(table, 0x424050) is None
    user = [e for e in kvm.parse_kvm_exit_lines(SCRIPT).exits if e.rip < symbols.USER_SPACE_END]
    assert Counter(e.reason for e in user) == Counter({"interrupt": 605, "cpuid": 35, "vintr": 12})


def test_the_guests_profile_is_recomputed_from_the_raw_outputs():
    kept = json.loads(fixture("nested_svm/profile.txt"))
    want = kept["profile"]
    got = reparse_profile(REPORT, SCRIPT, KALLSYMS).to_json()
    assert got["by_reason"] == want["by_reason"]
    assert got["by_function"] == want["by_function"]
    assert got["notes"] == [n for n in want["notes"] if "query-stats" not in n]
    top = want["by_function"][0]
    assert (top["function"], top["device"], top["count"]) == ("acpi_pm_read+0xb", "port 0x608", 3659)
    assert "port I/O by port (kvm:kvm_pio, 3659 records): 0x608 read 3659" in want["notes"]


def test_query_stats_of_a_nested_kvm_guest():
    before = fixture("query_stats/nested_svm_vcpu_before.txt")
    after = fixture("query_stats/nested_svm_vcpu_after.txt")
    assert set(kvm.parse_query_stats(before).per_path) == {"/machine/unattached/device[0]"}
    delta = kvm.diff_query_stats(before, after)
    assert delta == {"exits": 5307, "halt_exits": 6, "hypercalls": 0, "insn_emulation": 772,
                     "io_exits": 3787, "irq_exits": 704, "irq_window_exits": 44, "mmio_exits": 0,
                     "nmi_window_exits": 0, "request_irq_exits": 0, "signal_exits": 1}
    assert kvm.counter_reason_rows(delta) == [ReasonRow(reason="io", count=3787, share_pct=71.36),
                                              ReasonRow(reason="other", count=766, share_pct=14.43),
                                              ReasonRow(reason="irq", count=704, share_pct=13.27),
                                              ReasonRow(reason="irq_window", count=44,
                                                        share_pct=0.83),
                                              ReasonRow(reason="halt", count=6, share_pct=0.11)]
    vm = kvm.parse_query_stats(fixture("query_stats/nested_svm_vm_all.txt"))
    assert vm.per_path["vm"]["pages_2m"] == 80 and vm.per_path["vm"]["pages_4k"] == 253
    assert vm.skipped == set()
    assert json.loads(fixture("query_stats/nested_svm_query_kvm.txt")) == {
        "return": {"enabled": True, "present": True}}


def test_the_probe_judges_a_real_nested_kvm_boot_and_a_real_qemu_failure(fixture_text):
    console = fixture("probe/nested_svm_console.txt")
    ok = probe_verdict(console, "", 7.6)
    assert ok.usable and ok.reason == "kvm probe: a guest kernel booted in 7.6 s"
    stderr = fixture_text("qemu", "stderr-bad-device.txt")
    bad = probe_verdict("", stderr, 0.3)
    assert not bad.usable and bad.reason == "kvm probe: QEMU failed: " + stderr.strip().splitlines()[-1]
