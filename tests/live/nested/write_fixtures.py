"""Turn the raw outputs kept by a nested run into tests/fixtures/kvm/ files with their headers.

    VIRTBENCH_NESTED_KEEP=/tmp/keep .venv/bin/python -m pytest -q --run-nested tests/nested
    .venv/bin/python tests/live/nested/write_fixtures.py /tmp/keep/capture

Every file is written verbatim after its header (the perf script output gzipped: 1.9 MB of
text); the kallsyms file is an excerpt (the lines around each exit RIP), as its header says.
"""
from __future__ import annotations

import gzip
import json
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "kvm"


def where(versions: dict, day: str) -> str:
    return (
        f"## Source: captured on the virtbench development machine (2 cores, Debian 12), {day}, by\n"
        "## tests/live/nested/capture_kvm.py run through tests/live/nested/test_kvm_path.py: KVM nested in a TCG guest\n"
        "## (QEMU 7.2.22 on this host: -machine q35,accel=tcg -cpu EPYC,+svm -smp 2 -m 2G, virtbench's host\n"
        f"## image, Linux {versions['kernel']} with kvm_amd nested=1, CPU \"{versions['cpu']}\"), with Debian's\n"
        f"## {versions['perf']} and {versions['qemu']} inside it. The inner guest:\n"
        f"## virtbench's guest image under -accel kvm -cpu host ({versions['label']}), running\n"
        f"## the {versions['bench']} kernel at quick size ({json.dumps(versions['params'])}). Nested SVM: AMD exit names.\n")


FILES = {
    # raw file: (fixture path, what it is)
    "perf-kvm-stat-report.txt": (
        "perf_kvm_stat/nested_svm_acpi_pm.txt",
        "`perf kvm -i kvm-stat.data stat report --event=vmexit` on the recording virtbench's profiled trial made\n"
        "## (perf kvm stat record -D -1 --control fifo:.. -t VCPU_TID), stderr then stdout (perf 6.1 prints the\n"
        "## report on stderr). SVM names; io (the ACPI PM timer, port 0x608) first. Verbatim."),
    "perf-script-kvm-exit.txt": (
        "kvm_exit/nested_svm_acpi_pm_perf_script.txt.gz",
        "`perf script -i kvm-exit.data -F tid,cpu,time,event,trace` of the same trial's\n"
        "## `perf record -e kvm:kvm_exit -e kvm:kvm_pio -D -1 --control fifo:.. -t VCPU_TID`: every exit with its\n"
        "## guest RIP (kernel addresses, and user-space ones of the pi program), kvm_pio naming port 0x608.\n"
        "## Verbatim, gzipped."),
    "query-stats-before.txt": (
        "query_stats/nested_svm_vcpu_before.txt",
        "QMP {\"execute\": \"query-stats\", \"arguments\": {\"target\": \"vcpu\", \"providers\": [{\"provider\":\n"
        "## \"kvm\", \"names\": [exits, io_exits, ...]}]}} on the inner guest (1 vCPU) before one unprofiled trial.\n"
        "## QEMU's raw reply line, verbatim."),
    "query-stats-after.txt": (
        "query_stats/nested_svm_vcpu_after.txt",
        "the same query-stats after that trial. QEMU's raw reply line, verbatim."),
    "query-stats-vm.txt": (
        "query_stats/nested_svm_vm_all.txt",
        "QMP query-stats, target vm, provider kvm with no names (all of KVM's VM statistics). QEMU's raw\n"
        "## reply line, verbatim."),
    "query-kvm.txt": (
        "query_stats/nested_svm_query_kvm.txt",
        "QMP {\"execute\": \"query-kvm\"} on the inner guest. QEMU's raw reply line, verbatim."),
    "probe-console.txt": (
        "probe/nested_svm_console.txt",
        "the serial console of virtbench's KVM probe boot (kvm_probe.probe_argv: the guest image's kernel, no\n"
        "## root disk, -accel kvm -cpu host, loglevel=4): the kernel panics for want of a root, which is what\n"
        "## the probe waits for. Verbatim."),
    "kallsyms-excerpt.txt": (
        "nested_svm/kallsyms_excerpt.txt",
        "an EXCERPT of the inner guest's /proc/kallsyms, read in the same boot as the trace: for each exit RIP\n"
        "## of kvm_exit/nested_svm_acpi_pm_perf_script.txt.gz, the last text symbol at or below it and the next\n"
        "## one (all a lookup needs), lines verbatim in the file's order."),
    "kvm-exit-format.txt": (
        "nested_svm/kvm_exit_format.txt",
        "/sys/kernel/tracing/events/kvm/kvm_exit/format of the outer guest's kernel (kvm_amd loaded): the SVM\n"
        "## exit names kvm_exit prints. Verbatim."),
    "profile.json": (
        "nested_svm/profile.txt",
        "not a tool's output: virtbench's own Profile (Qemu.profiled_trial) of the trial the perf files\n"
        "## above recorded, as JSON, computed inside the guest; the fast tests recompute it from those files."),
}


def main(src: str) -> int:
    src_dir = Path(src)
    versions = json.loads((src_dir / "versions.json").read_text())
    day = time.strftime("%Y-%m-%d", time.localtime((src_dir / "versions.json").stat().st_mtime))
    head = where(versions, day)
    for raw, (dest, what) in FILES.items():
        text = (src_dir / raw).read_text()
        body = f"{head}## What it is: {what}\n## ----\n{text}"
        path = OUT / dest
        path.parent.mkdir(parents=True, exist_ok=True)
        if dest.endswith(".gz"):
            path.write_bytes(gzip.compress(body.encode(), compresslevel=9, mtime=0))
        else:
            path.write_text(body)
        print(f"{path.relative_to(OUT.parents[1])}: {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
