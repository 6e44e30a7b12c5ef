"""Run INSIDE the host image's guest (nested KVM), with the image's venv Python: virtbench's own
code boots an inner KVM guest, and every raw output virtbench's KVM readers take is saved
verbatim in OUTDIR, beside what virtbench made of it:

  probe-console.txt  probe.json        the KVM probe's boot (its console) and kvm_probe()'s answer
  resolve.json                         what class Qemu chose (accelerator, CPU, reason)
  query-kvm.txt                        QMP query-kvm, the raw reply line
  query-stats-before.txt / -after.txt  QMP query-stats (vCPU exit counters), raw reply lines,
                                       around one unprofiled trial
  query-stats-vm.txt                   QMP query-stats of the VM (all of KVM's VM statistics)
  perf-kvm-stat-report.txt             stderr+stdout of `perf kvm -i F stat report --event=vmexit`
  perf-script-kvm-exit.txt             stdout of `perf script -i F -F tid,cpu,time,event,trace`
  profile.json                         the Profile of the profiled trial those files came from
  kallsyms-excerpt.txt                 the inner guest's /proc/kallsyms lines around every RIP
  kvm-exit-format.txt                  /sys/kernel/tracing/events/kvm/kvm_exit/format (the SVM
                                       or VMX exit names this kernel prints)
  versions.json                        perf, QEMU and kernel versions; the spec and benchmark
  metadata.json                        the inner guest's metadata (its tunings read back)

Usage: capture_kvm.py OUTDIR [--spec qemu:clocksource=acpi_pm] [--bench pi]
"""
from __future__ import annotations

import argparse
import bisect
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from virtbench.measure import benchmarks
from virtbench.measure.environments.base import EnvSpec
from virtbench.measure.environments.qemu import Qemu
from virtbench.measure.environments.qemu.vmm import kvm_probe, version
from virtbench.measure.environments.qemu.profiling import kallsyms
from virtbench.machinery.image import guest_image as image
from virtbench.machinery.exits import kvm, symbols


def raw_qmp(env: Qemu, name: str, **args) -> str:
    """One QMP command over the guest's own connection; the reply line exactly as QEMU sent it."""
    msg = {"execute": name}
    if args:
        msg["arguments"] = args
    env.vmm.qmp.file.write((json.dumps(msg) + "\n").encode())
    while True:
        line = env.vmm.qmp.file.readline().decode()
        if not line:
            raise SystemExit(f"QMP closed during {name}")
        if '"return"' in line or '"error"' in line:
            return line.rstrip("\n")


def capture_probe(out: Path) -> None:
    kernel = image.cached().linux
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp, "console.log")
        argv = kvm_probe.probe_argv(version.qemu_binary(), kernel, log)
        t0 = time.monotonic()
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        seconds = time.monotonic() - t0
        console = log.read_text(errors="replace")
    (out / "probe-console.txt").write_text(console)
    verdict = kvm_probe.probe_verdict(console, proc.stderr, seconds)
    real = kvm_probe.kvm_probe(force=True)           # the whole probe, as a run does it
    (out / "probe.json").write_text(json.dumps(
        {"argv": argv, "exit": proc.returncode, "stderr": proc.stderr, "seconds": seconds,
         "verdict": verdict.to_json(), "kvm_probe": real.to_json()}, indent=1))


def kallsyms_excerpt(kallsyms: str, rips: set[int]) -> str:
    """The lines of kallsyms around each address: the last text symbol at or below it and the
    next one (what a lookup needs), in the file's own order."""
    lines = kallsyms.splitlines()
    text = [(int(ln.split()[0], 16), i) for i, ln in enumerate(lines)
            if len(ln.split()) >= 3 and ln.split()[1] in symbols.TEXT_TYPES]
    text.sort()
    addrs = [a for a, _ in text]
    keep = set()
    for rip in rips:
        j = bisect.bisect_right(addrs, rip) - 1
        if j >= 0:
            keep.add(text[j][1])
            if j + 1 < len(text):
                keep.add(text[j + 1][1])
    return "\n".join(lines[i] for i in sorted(keep)) + "\n"


T0 = time.monotonic()


def step(what: str) -> None:
    """A progress line on stderr: a step that hangs is named by the last line before it."""
    print(f"capture_kvm: {time.monotonic() - T0:6.1f} s {what}", file=sys.stderr, flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--spec", default="qemu")
    ap.add_argument("--bench", default="pi")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    step("the KVM probe")
    capture_probe(out)
    env = Qemu(EnvSpec.parse(a.spec))
    env.resolve()
    (out / "resolve.json").write_text(json.dumps(
        {"label": env.label, "accel": env.accel, "cpu": env.cpu, "reason": env.accel_reason}))
    bench = benchmarks.get(a.bench)
    params = bench.params(quick=True)
    try:
        step(f"starting {env.label}")
        env.start()
        (out / "query-kvm.txt").write_text(raw_qmp(env, "query-kvm") + "\n")
        cmd = kvm.query_stats_command()
        before = raw_qmp(env, "query-stats", **cmd["arguments"])
        step("a plain trial")
        plain = bench.run_trial(env, params)
        after = raw_qmp(env, "query-stats", **cmd["arguments"])
        (out / "query-stats-before.txt").write_text(before + "\n")
        (out / "query-stats-after.txt").write_text(after + "\n")
        vm = kvm.query_stats_command(target="vm", names=None)
        (out / "query-stats-vm.txt").write_text(raw_qmp(env, "query-stats", **vm["arguments"]) + "\n")
        step("a profiled trial")
        outcome, profile = env.profiled_trial(bench, params)
        (out / "profile.json").write_text(json.dumps(
            {"trial_ok": outcome.ok, "plain_trial_ok": plain.ok, "profile": profile.to_json()},
            indent=1))
        # the recorders' files are still in the guest's work directory: read them again with
        # the profiler's own command lines, keeping what perf printed
        step("perf report and perf script")
        prof = kvm.KvmProfiler(kvm.HostCommands(env.host), env.workdir / "kvm-profile")
        rep = subprocess.run(prof.report_argv(), capture_output=True, text=True, timeout=300)
        (out / "perf-kvm-stat-report.txt").write_text(rep.stderr + rep.stdout)
        scr = subprocess.run(prof.script_argv(), capture_output=True, text=True, timeout=300)
        (out / "perf-script-kvm-exit.txt").write_text(scr.stdout)
        rips = set(kvm.parse_kvm_exit_lines(scr.stdout).by_rip)
        (out / "kallsyms-excerpt.txt").write_text(kallsyms_excerpt(kallsyms(env, env.label), rips))
        (out / "metadata.json").write_text(json.dumps(env.metadata(), indent=1, default=str))
    finally:
        step(f"stopping {env.label}")
        env.stop()
    step("done")
    fmt = Path("/sys/kernel/tracing/events/kvm/kvm_exit/format")
    (out / "kvm-exit-format.txt").write_text(fmt.read_text())
    perf = subprocess.run(["perf", "--version"], capture_output=True, text=True).stdout.strip()
    (out / "versions.json").write_text(json.dumps(
        {"perf": perf, "qemu": version.qemu_version()[1], "kernel": platform.release(),
         "spec": a.spec, "label": env.label, "bench": a.bench, "params": params,
         "seconds": round(time.monotonic() - t0, 1), "python": sys.version.split()[0],
         "cpu": next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                      if ln.startswith("model name")), "?")}, indent=1))
    print(json.dumps({"out": str(out), "seconds": round(time.monotonic() - t0, 1)}))
    return 0


if __name__ == "__main__":
    os.umask(0o022)
    sys.exit(main())
