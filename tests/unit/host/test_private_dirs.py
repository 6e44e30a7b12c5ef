"""What a run keeps on this host outside guests' work directories goes into private
directories of the checked work root, never into the system's temporary directory: a private
sshd's keys, ssh's control socket, the scp benchmark's known_hosts, the KVM probe's console
log, the TCG plugin's sockets, bare metal's scratch. Each has a manifest; the next start
sweeps those of dead owners. The tests make the system's temporary directory unusable (or
one another user writes in) and check that nothing needs it and nothing in it is touched."""
from __future__ import annotations
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
import pytest
from virtbench.measure import environments
from virtbench.machinery.host.net import netns
from virtbench.machinery.host import workroot
from virtbench.machinery.host import watch
from workrootkit import ROOT, no_system_tmp, tmp_root  # noqa: F401


DEAD_OWNER = "1 0"


def test_a_private_dir_is_ours_in_the_root_and_swept_once_its_owner_is_gone(tmp_root):
    d = watch.private_dir("vbtmp-")
    assert d.parent == tmp_root and os.lstat(d).st_mode & 0o777 == 0o700
    assert json.loads((d / "manifest.json").read_text())["owner"].split()[0] == str(os.getpid())
    assert watch.sweep_private() == [] and d.exists()           # its owner (we) lives
    with watch.temporary_dir() as t:
        assert t.parent == tmp_root
    assert not t.exists()
    with pytest.raises(ValueError):
        watch.private_dir("vbqemu-")         # a guest's work directory is made by the guest


@pytest.mark.skipif(not shutil.which("ssh"), reason="needs the ssh client")
def test_an_ssh_session_keeps_its_control_socket_in_the_root_and_leaves_tmp_alone(
        tmp_root, tmp_path, monkeypatch):
    """A directory in /tmp named like an old control directory of a dead run, made by another
    user, is not virtbench's to remove: the session neither sweeps nor uses /tmp."""
    from virtbench.machinery.host.net.sshsession import SshOptions, SshSession
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    theirs = shared / "vb-ssh-999999999-abcd"
    theirs.mkdir()
    (theirs / "data").write_text("not virtbench's")
    if ROOT:
        nobody = pwd.getpwnam("nobody").pw_uid
        os.chown(theirs, nobody, -1)
        os.chown(theirs / "data", nobody, -1)
    session = SshSession(SshOptions("127.0.0.1", port=1))
    try:
        control = Path(session._control)
        assert control.parent == tmp_root and control.name.startswith("vbsshctl-")
        assert f"ControlPath={control}/cm" in session.base
    finally:
        session.close()
    assert (theirs / "data").read_text() == "not virtbench's"
    assert not control.exists() and list(shared.iterdir()) == [theirs]


@pytest.mark.skipif(shutil.which("qemu-system-x86_64") is None, reason="needs QEMU")
def test_the_kvm_probe_needs_no_system_tmp(tmp_root, tmp_path, no_system_tmp):
    from virtbench.measure.environments.qemu.vmm import kvm_probe
    probe = kvm_probe._run_kvm_probe(tmp_path / "no-such-kernel", timeout=30)
    assert probe.usable is False                    # QEMU cannot load a missing kernel
    assert list(tmp_root.iterdir()) == []           # its console log's directory is gone


def test_native_start_sweeps_what_a_killed_run_left(tmp_root):
    workroot.ensure()
    left = []
    for prefix in watch.PRIVATE_PREFIXES:
        d = tmp_root / f"{prefix}dead"
        d.mkdir(mode=0o700)
        watch.write_manifest(d, {"owner": DEAD_OWNER, "workdir": str(d)})
        left.append(d)
    live = watch.private_dir("vbscratch-")          # ours, alive: stays
    ns = "vb-deadbe-e"                              # a killed native run's namespace
    if ROOT:
        subprocess.run(["ip", "netns", "add", ns], check=True)
        netns.OWNERS.mkdir(parents=True, exist_ok=True)
        (netns.OWNERS / ns).write_text(DEAD_OWNER + "\n")
    try:
        env = environments.create("native")
        env.start()
        env.stop()
        assert not any(d.exists() for d in left) and live.exists()
        assert ns not in netns.list_namespaces()
    finally:
        netns.delete(ns)


def test_a_killed_runs_private_dirs_go_at_the_next_sweep(tmp_root):
    child = subprocess.run([sys.executable, "-c", (
        "from virtbench.machinery.host import watch\n"
        "for p in watch.PRIVATE_PREFIXES:\n    print(watch.private_dir(p))\n")],
        capture_output=True, text=True, timeout=60)        # exits without removing them
    made = [Path(line) for line in child.stdout.split()]
    assert len(made) == len(watch.PRIVATE_PREFIXES) and all(d.exists() for d in made)
    assert sorted(watch.sweep_private()) == sorted(d.name for d in made)
    assert not any(d.exists() for d in made)


def test_an_sshd_pid_that_is_not_that_sshd_is_not_killed(tmp_root):
    d = watch.private_dir("vbsshd-")
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                               "-f", f"{d}/sshd_config"])     # its command line, not sshd
    try:
        watch.write_manifest(d, {"owner": DEAD_OWNER, "workdir": str(d), "created": 0,
                                 "sshd_pid": victim.pid})
        assert watch.sweep_private() == [d.name]
        assert victim.poll() is None and not d.exists()
    finally:
        victim.kill()
        victim.wait()
