"""virtbench's KVM path for real: KVM nested in a TCG guest with AMD-V (tests/live/nested/outer.py).

This machine's /dev/kvm hangs ordinary guests, so without this the KVM probe's success branch,
a KVM guest, `--profile exits` from perf and the kvm_exit tracepoint, and QMP query-stats ran
only on captured outputs. Here virtbench, installed in the outer guest from this tree, runs
them against the outer guest's real /dev/kvm (kvm_amd, nested SVM):

- capture_kvm.py: the probe, class Qemu's choice, raw QMP and perf outputs of an inner guest
  with clocksource=acpi_pm and virtbench's profile of them (also the source of
  tests/fixtures/kvm/nested_svm/, see write_fixtures.py);
- `virtbench run --env native --env qemu --bench pi --bench stream --trials 2 --quick
  --min-section 0 --profile exits`: a KVM guest beside the outer guest's bare metal, profiled
  (the short sections not repeated: the profile, not the figures, is under test), and its
  `report --profile`;
- Zhang et al. (Table 3) under real KVM: the profile of capture_kvm.py's acpi_pm guest (the
  same Qemu.profiled_trial a run's `--profile exits` takes; the run above covers the CLI and
  the report, so the acpi_pm guest is booted once, not twice).

Only SVM exit names can appear (TCG cannot emulate VMX). Run with --run-nested.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from virtbench.measure.environments.qemu.vmm import kvm_probe
from virtbench.machinery.exits import kvm, symbols

pytestmark = pytest.mark.nested

HERE = Path(__file__).resolve().parent
KVM_LABEL = "qemu-kvm/virtio-blk/virtio-net"
ZHANG_LABEL = "qemu-kvm/virtio-blk/virtio-net/clocksource=acpi_pm"
CAPTURED = ["probe-console.txt", "probe.json", "resolve.json", "query-kvm.txt",
            "query-stats-before.txt", "query-stats-after.txt", "query-stats-vm.txt",
            "perf-kvm-stat-report.txt", "perf-script-kvm-exit.txt", "profile.json",
            "kallsyms-excerpt.txt", "kvm-exit-format.txt", "versions.json", "metadata.json"]
# VMX's names for the exits an SVM guest shows as msr, io, hlt, interrupt, npf
VMX_NAMES = {"MSR_WRITE", "MSR_READ", "IO_INSTRUCTION", "HLT", "EXTERNAL_INTERRUPT",
             "EPT_VIOLATION", "EPT_MISCONFIG", "CPUID"}


def save(keep: Path, name: str, text: str) -> None:
    (keep / name).write_text(text)


# -- what the guest was asked to do, once per module ----------------------------------------
@pytest.fixture(scope="module")
def captured(outer, keep_dir) -> dict[str, str]:
    """capture_kvm.py in the outer guest: raw outputs of an acpi_pm inner guest under KVM."""
    def capture() -> dict[str, str]:
        outer.put("/root/capture_kvm.py", (HERE / "capture_kvm.py").read_bytes())
        outer.python("/root/capture_kvm.py", "/root/capture", "--spec",
                     "qemu:clocksource=acpi_pm", "--bench", "pi", timeout=600)
        return outer.get_dir("/root/capture", CAPTURED)

    files = outer.again_if_lost(capture)
    (keep_dir / "capture").mkdir(exist_ok=True)
    for name, text in files.items():
        save(keep_dir / "capture", name, text)
    return files


def run_and_report(outer, keep: Path, tag: str, run_args: list[str]) -> dict:
    return outer.again_if_lost(lambda: _run_and_report(outer, keep, tag, run_args))


def _run_and_report(outer, keep: Path, tag: str, run_args: list[str]) -> dict:
    res = outer.virtbench("run", *run_args, "--no-progress", timeout=1200, check=False)
    save(keep, f"{tag}-run.txt", f"exit {res.exit}\n--- stdout\n{res.stdout}\n--- stderr\n{res.stderr}")
    if res.exit != 0:
        raise outer.failed(f"virtbench run {tag}", res)
    # both reports in one Python: importing virtbench takes ~25 s under TCG
    rep = outer.sh(f"""{outer_python()} -c "
import sys
from virtbench.interface.cli import commands as cli
a = cli.main(['report', '--format', 'json'])
print('@@@@')
b = cli.main(['report', '--profile'])
sys.exit(a or b)" """, timeout=300)
    data, _, text = rep.stdout.partition("\n@@@@\n")
    save(keep, f"{tag}-report.json", data)
    save(keep, f"{tag}-report-profile.txt", text)
    return {"run": res, "json": json.loads(data), "profile_text": text}


def outer_python() -> str:
    from outer import PYTHON
    return PYTHON


@pytest.fixture(scope="module")
def kvm_run(outer, keep_dir):
    return run_and_report(outer, keep_dir, "kvm", [
        "--env", "native", "--env", "qemu", "--bench", "pi", "--bench", "stream",
        "--trials", "2", "--quick", "--min-section", "0", "--profile", "exits"])


def svm_names(fmt: str) -> set[str]:
    """The exit names this kernel's kvm_exit prints (its format file's symbol table)."""
    return set(re.findall(r'\{ 0x[0-9a-f]+, "(\w+)" \}', fmt))


def profiles(report: dict) -> dict[tuple[str, str], dict]:
    return {(p["environment"], p["benchmark"]): p for p in report["profiles"]}


def counters(profile: dict) -> dict[str, int]:
    note = next(n for n in profile["notes"] if n.startswith("KVM counters over the trial"))
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", note)}


# -- the outer guest ------------------------------------------------------------------------
def test_the_outer_guest_hosts_kvm_with_nested_svm(outer):
    res = outer.sh("grep -c -w svm /proc/cpuinfo; grep -c -w npt /proc/cpuinfo; "
                   "test -c /dev/kvm && echo kvm; cat /sys/module/kvm_amd/parameters/nested; "
                   "grep -c '^kvm:kvm_exit$' /sys/kernel/tracing/available_events; "
                   "dmesg | grep -c 'Nested Virtualization enabled'")
    assert res.stdout.split() == ["2", "2", "kvm", "1", "1", "1"], res.stdout


# -- (a) the probe --------------------------------------------------------------------------
def test_the_kvm_probe_succeeds_and_qemu_chooses_kvm(captured):
    probe = json.loads(captured["probe.json"])
    assert probe["kvm_probe"]["usable"] is True
    assert re.fullmatch(r"kvm probe: a guest kernel booted in \d+\.\d s", probe["kvm_probe"]["reason"])
    assert probe["exit"] == 0 and "-accel" in probe["argv"] and "host" in probe["argv"]
    console = captured["probe-console.txt"]
    assert "VFS: Unable to mount root fs" in console and "Kernel panic" in console
    # the verdict, judged here on the console the guest saw, is the guest's own
    here = kvm_probe.probe_verdict(console, probe["stderr"], probe["seconds"])
    assert here.usable and here.to_json() == probe["verdict"]
    chose = json.loads(captured["resolve.json"])
    assert (chose["accel"], chose["cpu"], chose["label"]) == ("kvm", "host", ZHANG_LABEL)
    assert chose["reason"] == probe["kvm_probe"]["reason"]
    assert json.loads(captured["query-kvm.txt"]) == {"return": {"enabled": True, "present": True}}


# -- (b) a KVM guest beside bare metal ------------------------------------------------------
def test_a_run_measures_a_kvm_guest_beside_the_outer_guests_bare_metal(kvm_run):
    data = kvm_run["json"]
    envs = {e["label"]: e for e in data["environments"]}
    assert set(envs) == {"native", KVM_LABEL}
    meta = envs[KVM_LABEL]["metadata"]
    assert meta["accel"] == "kvm" and meta["accel_reason"].startswith("kvm probe: a guest kernel booted")
    assert meta["platform"] == "kvm"
    # the kernel's word for the hypervisor, and QEMU's ACPI OEM id (BOCHS) naming the product
    assert meta["platform_evidence"].startswith("dmesg: Hypervisor detected: KVM")
    assert "ACPI OEM BOCHS" in meta["platform_evidence"]
    assert "q35,accel=kvm" in meta["qemu_argv"] and meta["tunings"]["clocksource"] == "kvm-clock"
    assert envs["native"]["metadata"]["vmx_or_svm"] is True        # the outer guest has AMD-V
    results = {(r["environment"], r["benchmark"]): r for r in data["results"]}
    assert set(results) == {(e, b) for e in envs for b in ("pi", "stream")}
    for r in results.values():
        assert r["n"] + len(r["disturbed"]) == 2 and r["n"] >= 1, r
    assert data["run"]["status"] == "complete"


# -- (c) the exit profile: perf kvm stat, kvm_exit by RIP, kallsyms -------------------------
def test_the_kvm_profile_names_svm_exits_and_guest_functions(kvm_run, captured):
    names = svm_names(captured["kvm-exit-format.txt"])
    assert {"msr", "io", "npf", "hlt", "interrupt", "vintr", "cpuid"} <= names
    assert not names & VMX_NAMES
    by = profiles(kvm_run["json"])
    assert set(by) == {(KVM_LABEL, "pi"), (KVM_LABEL, "stream")}
    for (_, bench), p in by.items():
        assert p["status"] == "ok" and p["source"] == "kvm", p
        reasons = {r["reason"]: r for r in p["by_reason"]}
        assert set(reasons) <= names, reasons                 # SVM names, as perf prints them
        # the TSC-deadline timer (wrmsr) and the interrupts it raises are there in any trial
        assert reasons["msr"]["count"] > 0 and reasons["interrupt"]["count"] > 0
        assert all(r["time_share_pct"] is not None for r in p["by_reason"])   # perf kvm stat's
        samples = next(n for n in p["notes"] if n.startswith("perf kvm stat: ") and "samples" in n)
        total = int(re.search(r"(\d+) samples", samples).group(1))
        assert total == sum(r["count"] for r in p["by_reason"]) > 0
        # perf recorded the trial's exits, not a late part of them: KVM's own count agrees
        exits = counters(p)["exits"]
        assert 0.8 * exits <= total <= 1.25 * exits, (bench, total, exits)
        rips = int(re.search(r"kvm:kvm_exit: (\d+) records", " ".join(p["notes"])).group(1))
        assert 0.8 * exits <= rips <= 1.25 * exits
        top = [f["function"] or "" for f in p["by_function"][:4]]
        assert any(f.startswith("native_write_msr+") for f in top), top       # the timer's wrmsr
        assert all(f["function"] for f in p["by_function"]), p["by_function"]  # all named
        kernel = [f for f in p["by_function"] if f["function"] != symbols.USER_SPACE]
        assert all(int(f["address"], 16) >= symbols.USER_SPACE_END for f in kernel)
    # `report --profile` prints them: the reasons and the guest function of the timer's exits
    text = kvm_run["profile_text"]
    assert KVM_LABEL in text and "native_write_msr+" in text and "msr" in text, text[-2000:]


# -- (d) KVM's own counters over QMP --------------------------------------------------------
def test_query_stats_counters_are_read_and_real(kvm_run, captured):
    for p in profiles(kvm_run["json"]).values():
        c = counters(p)
        assert c["exits"] > 0 and c["irq_exits"] > 0
        assert c["exits"] >= c["irq_exits"] + c["io_exits"] + c["halt_exits"]
    before, after = captured["query-stats-before.txt"], captured["query-stats-after.txt"]
    delta = kvm.diff_query_stats(before, after)
    assert set(kvm.EXIT_COUNTERS) <= set(delta)
    assert delta["exits"] > 0 and delta["io_exits"] > 0     # acpi_pm: the PM timer's port
    vm = kvm.parse_query_stats(captured["query-stats-vm.txt"])
    assert vm.totals["pages_4k"] + vm.totals["pages_2m"] > 0


# -- the profile the guest computed is the one these parsers compute from its raw outputs ----
def test_raw_outputs_parsed_here_give_the_guests_profile(captured):
    from kvmfix import reparse_profile
    want = json.loads(captured["profile.json"])
    assert want["trial_ok"] and want["plain_trial_ok"]
    got = reparse_profile(captured["perf-kvm-stat-report.txt"],
                          captured["perf-script-kvm-exit.txt"], captured["kallsyms-excerpt.txt"])
    assert got.to_json()["by_reason"] == want["profile"]["by_reason"]
    assert got.to_json()["by_function"] == want["profile"]["by_function"]
    assert got.notes == [n for n in want["profile"]["notes"] if "query-stats" not in n]
    # the tracepoint and perf kvm stat see the same exits: same SVM names, counts alike
    names = svm_names(captured["kvm-exit-format.txt"])
    traced = kvm.parse_kvm_exit_lines(captured["perf-script-kvm-exit.txt"]).by_reason
    assert set(traced) <= names and traced["io"] > 0 and traced["msr"] > 0
    for row in got.by_reason:
        if row.count >= 100:
            assert 0.8 * row.count <= traced[row.reason] <= 1.25 * row.count, (row, traced)


# -- Zhang et al., Table 3, under real KVM --------------------------------------------------
def test_zhang_acpi_pm_clock_reads_are_port_io_exits_in_acpi_pm_read(captured):
    versions = json.loads(captured["versions.json"])
    assert versions["label"] == ZHANG_LABEL and versions["bench"] == "pi"
    assert json.loads(captured["metadata.json"])["tunings"]["clocksource"] == "acpi_pm"
    profiled = json.loads(captured["profile.json"])
    p = profiled["profile"]
    assert profiled["trial_ok"] and p["source"] == "kvm"
    top_reason = p["by_reason"][0]
    assert top_reason["reason"] == "io" and top_reason["share_pct"] > 50, p["by_reason"]
    top = p["by_function"][0]
    assert top["function"].startswith("acpi_pm_read+") and top["device"] == "port 0x608", top
    assert top["count"] >= 0.9 * top_reason["count"]        # nearly every io exit is the timer
    pio = next(n for n in p["notes"] if n.startswith("port I/O by port"))
    assert re.search(r": 0x608 read \d+$", pio), pio        # the PM timer, and nothing else
    assert counters(p)["io_exits"] > 0.5 * counters(p)["exits"]
