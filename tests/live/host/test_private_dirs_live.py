"""The live part of tests/unit/host/test_private_dirs.py: its tests that need root and this host.

What a run keeps on this host outside guests' work directories goes into private
directories of the checked work root, never into the system's temporary directory: a private
sshd's keys, ssh's control socket, the scp benchmark's known_hosts, the KVM probe's console
log, the TCG plugin's sockets, bare metal's scratch. Each has a manifest; the next start
sweeps those of dead owners. The tests make the system's temporary directory unusable (or
one another user writes in) and check that nothing needs it and nothing in it is touched.
"""
from __future__ import annotations
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
import pytest
from virtbench.measure import environments
from virtbench.measure.benchmarks import REGISTRY
from virtbench.machinery.host import guardian, watch
from workrootkit import ROOT, no_system_tmp, tmp_root  # noqa: F401


@pytest.mark.skipif(not ROOT, reason="namespaces and a private sshd need root")
def test_a_native_scp_trial_needs_no_system_tmp_and_keeps_its_keys_in_the_root(
        tmp_root, tmp_path, no_system_tmp):
    bench = REGISTRY["scp"]
    scratch = tmp_path / "scratch"
    env = environments.create(f"native:scratch={scratch}")
    with env:
        outcome = bench.run_trial(env, bench.params({"size_mb": 1, "ciphers": "aes128-ctr"}))
        keys = env._sshd.dir
        assert keys.parent == tmp_root and keys.name.startswith("vbsshd-")
    assert outcome.ok, outcome.error
    assert not keys.exists()
    assert [p.name for p in tmp_root.iterdir()] == []           # known_hosts' directory too


def running(pid: int) -> bool:
    """A live process (not gone, not a zombie nobody reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


SSHD_CHILD = """
import socket, sys, time
import virtbench.machinery.host.executor
if sys.argv[2] == "outlive":      # a server that outlives its owner (PR_SET_PDEATHSIG undone)
    virtbench.machinery.host.executor.die_with_parent = lambda: None
from virtbench.machinery.host.net.sshd import Sshd
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
prefix = ["ip", "netns", "exec", sys.argv[1]]
server = Sshd("127.0.0.1", prefix, port=port)
print(server.dir, server.server.proc.pid, flush=True)
time.sleep(120)
"""


@pytest.mark.skipif(not ROOT or not shutil.which("sshd") and not os.path.exists(
    "/usr/sbin/sshd"), reason="a private sshd in a namespace needs root and sshd")
@pytest.mark.parametrize("how", ["dies", "outlive"])
def test_the_private_sshd_of_a_killed_run_is_killed_by_the_sweep(tmp_root, how):
    """The sshd dies with virtbench (PR_SET_PDEATHSIG); one that did not (`outlive`) is
    found by its manifest and killed by the sweep, after checking /proc."""
    ns = "vb-5ad5ad-e"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
    child = subprocess.Popen([sys.executable, "-c", SSHD_CHILD, ns, how],
                             stdout=subprocess.PIPE, text=True)
    pid = None
    try:
        keys, pid = child.stdout.readline().split()
        keys, pid = Path(keys), int(pid)
        assert keys.parent == tmp_root
        child.kill()                                  # virtbench dies
        child.wait()
        if how == "dies":
            deadline = time.monotonic() + 10
            while running(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not running(pid)                   # the kernel killed it with its owner
            assert watch.sweep_private() == [keys.name] and not keys.exists()
            return
        assert running(pid)
        assert guardian.is_our_sshd(pid, str(keys), None)
        assert not guardian.is_our_sshd(pid, str(tmp_root / "vbsshd-other"), None)
        assert watch.sweep_private() == [keys.name]
        assert not keys.exists() and not running(pid)
    finally:
        child.kill()
        child.wait()
        try:
            if pid and os.path.basename(os.readlink(f"/proc/{pid}/exe")) == "sshd":
                os.kill(int(pid), 9)                  # the sweep did not
        except OSError:
            pass
        subprocess.run(["ip", "netns", "delete", ns], capture_output=True)
