"""KvmProfiler with a fake executor replaying real outputs (tests/fixtures/kvm): the argv it builds, the
profile it returns, missing perf / tracepoints as one line."""
from __future__ import annotations

from pathlib import Path

import pytest

from kvmfix import fixture
from virtbench.machinery.exits.kvm import KvmProfileError, KvmProfiler, KvmRecording
from virtbench.machinery.exits.kvm_stat import parse_perf_kvm_stat_report
from virtbench.foundations.model.profile import FunctionRow, ReasonRow
from virtbench.machinery.exits.perf_control import PerfControlError

PVM_REPORT = fixture("perf_kvm_stat/empty_report_pvm_host.txt")
PVM_SCRIPT = fixture("kvm_exit/pvm_host_perf_script.txt")
STOPPED = {"kvm": (-2, "", fixture("perf_record/stat_record_stopped.txt")),      # SIGINT: status -2
           "record": (-2, "", fixture("perf_record/exit_record_stopped.txt"))}


class FakeExecutor:
    """Answers by the perf subcommand; records every argv. `outputs` maps a key to (exit, stdout, stderr)."""

    def __init__(self, outputs: dict, missing: bool = False, enable_fails=None):
        self.outputs, self.missing = outputs, missing
        self.calls: list[list[str]] = []
        self.started: list[list[str]] = []
        self.stopped: list[int] = []
        self.enabled: list[tuple[int, Path, Path]] = []
        self.events: list[str] = []          # popen/enable/terminate in the order they came
        self.enable_fails = enable_fails     # {perf subcommand: PerfControlError}

    def _key(self, argv):
        if argv[1:3] == ["--version"] or argv[1] == "--version":
            return "version"
        if argv[1] == "list":
            return "list"
        if argv[1] == "kvm" and "report" in argv:
            return "report"
        return argv[1]

    def run(self, argv, timeout):
        if self.missing:
            raise FileNotFoundError(argv[0])
        self.calls.append(list(argv))
        return self.outputs[self._key(argv)]

    def popen(self, argv):
        if self.missing:
            raise FileNotFoundError(argv[0])
        self.started.append(list(argv))
        self.events.append(f"popen {argv[1]}")
        return len(self.started) - 1

    def enable(self, handle, ctl, ack, timeout):
        name = self.started[handle][1]
        self.events.append(f"enable {name}")
        assert ctl.is_fifo() and ack.is_fifo()           # made before perf was started
        if self.enable_fails and name in self.enable_fails:
            raise self.enable_fails[name]
        self.enabled.append((handle, ctl, ack))

    def terminate(self, handle, timeout):
        self.stopped.append(handle)
        self.events.append(f"terminate {self.started[handle][1]}")
        name = self.started[handle][1]
        return self.outputs.get(("stop", name), STOPPED[name])


def outputs(report=PVM_REPORT, script=PVM_SCRIPT, stops=None, **extra):
    base = {"version": (0, "perf version 6.1.187\n", ""),
            "list": (0, fixture("perf_errors/perf_list_kvm_exit.txt"), ""),
            "report": (0, "", report), "script": (0, script, "")}
    base.update(extra)
    base.update(stops or {})
    return base


def profiler(ex, tmp_path: Path, **kw):
    ticks = iter([100.0, 112.5])
    return KvmProfiler(ex, tmp_path, clock=lambda: next(ticks), **kw)


def test_argv_for_a_qemu_pid_and_for_vcpu_threads(tmp_path):
    p = KvmProfiler(FakeExecutor({}), tmp_path)
    stat, exits = p.record_argvs(4242)
    assert stat == ["perf", "kvm", "stat", "record", "-o", str(tmp_path / "kvm-stat.data"),
                    "-D", "-1", "--control", f"fifo:{tmp_path}/kvm-stat.ctl,{tmp_path}/kvm-stat.ack",
                    "-p", "4242"]
    assert exits == ["perf", "record", "-e", "kvm:kvm_exit", "-e", "kvm:kvm_pio",
                     "-o", str(tmp_path / "kvm-exit.data"),
                     "-D", "-1", "--control", f"fifo:{tmp_path}/kvm-exit.ctl,{tmp_path}/kvm-exit.ack",
                     "-p", "4242"]
    assert p.record_argvs(4242, tids=[4250, 4251])[0][-2:] == ["-t", "4250,4251"]
    assert p.report_argv() == ["perf", "kvm", "-i", str(tmp_path / "kvm-stat.data"), "stat", "report",
                               "--event=vmexit"]
    assert p.script_argv() == ["perf", "script", "-i", str(tmp_path / "kvm-exit.data"),
                               "-F", "tid,cpu,time,event,trace"]
    assert len(KvmProfiler(FakeExecutor({}), tmp_path,
                           recording=KvmRecording(per_rip=False)).record_argvs(1)) == 1


def test_check_gives_perf_version(tmp_path):
    assert profiler(FakeExecutor(outputs()), tmp_path).check() == "perf version 6.1.187"


def test_profile_of_the_pvm_host_run_is_empty_and_says_why(tmp_path):
    ex = FakeExecutor(outputs())
    p = profiler(ex, tmp_path)
    session = p.start(29723)
    prof = p.stop(session, fixture("query_stats/pvm_host_vcpu_before.txt"),
                  fixture("query_stats/pvm_host_vcpu_after.txt"))
    assert ex.stopped == [0, 1]
    assert [c[1] for c in ex.calls] == ["kvm", "script"]
    assert prof.source == "kvm" and prof.duration_s == 12.5
    assert prof.by_reason == [ReasonRow(reason="other", count=2448, share_pct=100.0,
                                        time_share_pct=None)]    # from KVM's counters
    assert prof.by_function == []
    assert any(n.startswith("no VM exit recorded: kvm:kvm_exit never fired") for n in prof.notes)
    assert any(n.startswith("exits by reason from KVM's counters") for n in prof.notes)
    assert "KVM counters over the trial (query-stats): exits=2448, io_exits=0, mmio_exits=0, halt_exits=0" \
        in prof.notes
    assert "perf kvm stat: 0 samples, 0.00 us handling them" in prof.notes
    assert ("port I/O by port (kvm:kvm_pio, 213 records): 0x64 read 43, 0x60 write 17, 0xcf8 write 17, "
            "0x64 write 16, 0x70 read 9, 0x92 read 9, 0xcfc read 9, 0x60 read 8") in prof.notes


def test_profile_takes_reasons_from_perf_kvm_stat_and_rips_from_the_trace(tmp_path):
    # the report and the trace are real but from two different hosts (see their headers)
    report = fixture("perf_kvm_stat/intel_sysbench_vmexit.txt")
    trace = fixture("kvm_exit/qemu_pckbd_trace_pipe.txt")
    p = profiler(FakeExecutor(outputs(report=report, script=trace)), tmp_path,
                 symbolise=lambda a: ("ps2_read", "mouse_isr") if a == 0xce93 else None,
                 recording=KvmRecording(top=4))
    prof = p.stop(p.start(1))
    assert prof.by_reason == parse_perf_kvm_stat_report(report)
    assert prof.by_reason[0].time_share_pct == 0.04
    assert [r.address for r in prof.by_function] == ["0x22da", "0x110c8c", "0xce93", "0xceca"]
    assert prof.by_function[2] == FunctionRow(address="0xce93", function="ps2_read",
                                              caller="mouse_isr", count=1, share_pct=10.0,
                                              device="port 0x60")
    assert "exits by guest RIP from kvm:kvm_exit: 10 records" in prof.notes
    assert prof.to_json()["by_function"][1]["device"] == "port 0x64"


def test_without_counters_an_empty_run_has_no_reasons(tmp_path):
    p = profiler(FakeExecutor(outputs()), tmp_path)
    prof = p.stop(p.start(1))
    assert prof.by_reason == [] and not any("KVM's counters" in n for n in prof.notes)


def test_without_perf_kvm_stat_rows_reasons_come_from_the_trace(tmp_path):
    trace = fixture("kvm_exit/amd_npf_three_vcpus.txt")
    p = profiler(FakeExecutor(outputs(script=trace)), tmp_path)
    prof = p.stop(p.start(1))
    assert [(r.reason, r.count, r.share_pct) for r in prof.by_reason] == [("npf", 3, 100.0)]
    assert prof.by_function[0].function is None and prof.by_function[0].address == "0xfd11d"


def test_missing_perf_is_one_line(tmp_path):
    p = profiler(FakeExecutor({}, missing=True), tmp_path)
    for call in (p.check, lambda: p.start(1)):
        with pytest.raises(KvmProfileError) as err:
            call()
        assert str(err.value) == "perf is not installed ('perf' not found): apt-get install linux-perf"


def test_perf_that_does_not_run_names_its_error(tmp_path):
    failing = (129, "", fixture("perf_errors/unknown_switch.txt"))    # a real perf failure, its first line kept
    p = profiler(FakeExecutor(outputs(version=failing)), tmp_path)
    with pytest.raises(KvmProfileError) as err:
        p.check()
    assert str(err.value) == ("perf does not run (Error: unknown switch `i'): apt-get install linux-perf "
                              "(the package for the running kernel)")


def test_kernel_without_the_tracepoint(tmp_path):
    p = profiler(FakeExecutor(outputs(list=(0, "", ""))), tmp_path)   # `perf list` of an absent tracepoint
    with pytest.raises(KvmProfileError) as err:
        p.check()
    assert "no kvm:kvm_exit tracepoint" in str(err.value) and "\n" not in str(err.value)


def test_recorder_rejecting_the_tracepoint(tmp_path):
    failed = (129, "", fixture("perf_errors/unknown_tracepoint.txt"))
    p = profiler(FakeExecutor(outputs(stops={("stop", "record"): failed})), tmp_path)
    with pytest.raises(KvmProfileError) as err:
        p.stop(p.start(1))
    assert str(err.value).startswith("this kernel has no kvm:kvm_exit tracepoint")


def test_recorder_failing_otherwise_names_the_status(tmp_path):
    failed = (129, "", fixture("perf_errors/unknown_switch.txt"))      # a real perf usage error
    p = profiler(FakeExecutor(outputs(stops={("stop", "kvm"): failed})), tmp_path)
    with pytest.raises(KvmProfileError) as err:
        p.stop(p.start(1))
    assert str(err.value).startswith("perf kvm failed with status 129 (Error: unknown switch `i')")


def test_report_in_the_wrong_place_is_one_line(tmp_path):
    p = profiler(FakeExecutor(outputs(report=fixture("perf_errors/unknown_switch.txt"))), tmp_path)
    with pytest.raises(KvmProfileError) as err:
        p.stop(p.start(1))
    assert "no VM-EXIT table" in str(err.value) and "\n" not in str(err.value)


def test_the_trial_starts_only_once_both_recorders_acknowledge_enable(tmp_path):
    # measured nested (KVM in a TCG guest): perf took seconds to set up, and a trial started at
    # once lost its first exits (58 of 2,202 recorded); the recorders now start disabled
    ex = FakeExecutor(outputs())
    ticks = iter([100.0, 103.0])
    p = KvmProfiler(ex, tmp_path, clock=lambda: next(ticks))
    session = p.start(1)
    assert ex.events == ["popen kvm", "popen record", "enable kvm", "enable record"]
    assert [(h, c.name, a.name) for h, c, a in ex.enabled] == [
        (0, "kvm-stat.ctl", "kvm-stat.ack"), (1, "kvm-exit.ctl", "kvm-exit.ack")]
    assert session.started == 100.0                    # the clock starts once both record
    assert p.stop(session).duration_s == 3.0


def test_a_recorder_that_dies_before_enable_is_one_line_and_both_are_stopped(tmp_path):
    died = PerfControlError("perf exited before it would open its control FIFO", exited=True)
    usage = (129, "", fixture("perf_errors/unknown_switch.txt"))     # a real perf usage error
    ex = FakeExecutor(outputs(stops={("stop", "record"): usage}), enable_fails={"record": died})
    p = profiler(ex, tmp_path)
    with pytest.raises(KvmProfileError) as err:
        p.start(1)
    assert str(err.value) == ("perf record did not start recording: perf exited before it would open its "
                              "control FIFO (Error: unknown switch `i'); it needs perf 5.10 or later "
                              "(-D -1 --control) and root")
    assert sorted(ex.stopped) == [0, 1]


def test_a_recorder_rejecting_the_tracepoint_at_start(tmp_path):
    died = PerfControlError("perf exited before it would open its control FIFO", exited=True)
    failed = (129, "", fixture("perf_errors/unknown_tracepoint.txt"))
    ex = FakeExecutor(outputs(stops={("stop", "record"): failed}), enable_fails={"record": died})
    with pytest.raises(KvmProfileError) as err:
        profiler(ex, tmp_path).start(1)
    assert str(err.value).startswith("this kernel has no kvm:kvm_exit tracepoint")
