"""KvmProfiler for real on this host: real perf on a real QEMU/KVM process (no guest OS: the BIOS runs, then
spins). On this machine /dev/kvm is the PVM module, whose KVM never fires kvm:kvm_exit, so the profile has
no RIPs and its reasons come from KVM's own counters (QMP query-stats). Skipped without root, perf, QEMU or
/dev/kvm."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time

import pytest

from virtbench.machinery.host.executor import HostExecutor
from virtbench.machinery.exits.kvm import HostCommands, KvmProfiler, query_stats_command

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("perf") or not shutil.which("qemu-system-x86_64")
    or not os.access("/dev/kvm", os.R_OK | os.W_OK), reason="needs root, perf, qemu-system-x86_64, /dev/kvm")


class Qmp:
    def __init__(self, path: str):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.f = self.sock.makefile("rw")
        self._reply()
        self.call({"execute": "qmp_capabilities"})

    def _reply(self) -> dict:
        while True:
            msg = json.loads(self.f.readline())
            if "event" not in msg:
                return msg

    def call(self, cmd: dict) -> dict:
        self.f.write(json.dumps(cmd) + "\n")
        self.f.flush()
        return self._reply()


@pytest.fixture
def kvm_qemu(tmp_path):
    sock = str(tmp_path / "qmp.sock")
    q = subprocess.Popen(["qemu-system-x86_64", "-M", "pc", "-accel", "kvm", "-smp", "2", "-m", "256",
                          "-nodefaults", "-display", "none", "-qmp", f"unix:{sock},server=on,wait=off"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(100):
            if os.path.exists(sock) or q.poll() is not None:
                break
            time.sleep(0.05)
        if q.poll() is not None:
            pytest.skip(f"QEMU with -accel kvm does not start here: {q.stderr.read().strip()[:120]}")
        yield q, Qmp(sock)
    finally:
        q.terminate()
        q.wait(timeout=10)


def test_profile_of_a_running_kvm_qemu(kvm_qemu, tmp_path):
    q, qmp = kvm_qemu
    p = KvmProfiler(HostCommands(HostExecutor()), tmp_path / "perf")
    (tmp_path / "perf").mkdir()
    assert p.check().startswith("perf version")
    before = qmp.call(query_stats_command())
    session = p.start(q.pid)
    time.sleep(1.5)
    after = qmp.call(query_stats_command())
    prof = p.stop(session, before, after)
    assert (tmp_path / "perf" / "kvm-stat.data").exists() and (tmp_path / "perf" / "kvm-exit.data").exists()
    assert prof.source == "kvm" and 1.4 < prof.duration_s < 30
    assert any(n.startswith("KVM counters over the trial (query-stats): exits=") for n in prof.notes)
    if prof.by_function:                      # a KVM that fires kvm:kvm_exit (not PVM)
        assert prof.by_reason and all(r.address.startswith("0x") for r in prof.by_function)
    else:                                     # PVM: reasons from the counters, exits counted, ports named
        assert prof.by_reason and sum(r.count for r in prof.by_reason) > 0
        assert any(n.startswith("port I/O by port (kvm:kvm_pio") for n in prof.notes)
