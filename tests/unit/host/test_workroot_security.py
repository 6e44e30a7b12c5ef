"""A local user must not be able to make a root run act through the work directory.

The work root is refused unless virtbench can trust it; manifests in it are data: every
field is checked against what virtbench itself creates before anything is done with it.
Ownership cases use the real unprivileged user `nobody` (the suite runs as root)."""
from __future__ import annotations
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
import pytest
from virtbench.machinery.host import workroot
from virtbench.measure.environments import create
from virtbench.measure.environments.native import check_scratch
from virtbench.core.errors import VirtbenchError
from virtbench.machinery.host import guardian, watch

DEAD_OWNER = "1 0"        # pid 1 never has start time 0: an owner that is gone


@pytest.fixture
def tmp_root(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTBENCH_TMP", str(tmp_path))
    return tmp_path / "virtbench"


# -- the work root itself ---------------------------------------------------------------------
def test_the_work_root_is_made_private(tmp_root):
    path = workroot.ensure()
    assert path == tmp_root and path.stat().st_mode & 0o777 == 0o700
    assert path.stat().st_uid == os.geteuid()


def test_a_symlinked_work_root_is_refused(tmp_root, tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    tmp_root.symlink_to(target)
    with pytest.raises(VirtbenchError, match="is a symbolic link"):
        workroot.ensure()


def test_a_group_or_world_writable_work_root_is_refused(tmp_root):
    tmp_root.mkdir()
    os.chmod(tmp_root, 0o777)
    with pytest.raises(VirtbenchError, match="writable by other users .mode 0777"):
        workroot.ensure()


def test_a_parent_others_can_rename_in_is_refused(tmp_path, monkeypatch):
    parent = tmp_path / "shared"
    parent.mkdir()
    os.chmod(parent, 0o777)          # world-writable, no sticky bit
    monkeypatch.setenv("VIRTBENCH_TMP", str(parent))
    with pytest.raises(VirtbenchError, match="without the sticky bit"):
        workroot.ensure()
    os.chmod(parent, 0o1777)         # as /var/tmp: fine
    assert workroot.ensure() == parent / "virtbench"


# -- scratch -----------------------------------------------------------------------------------
def test_a_symlinked_scratch_directory_is_refused(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(VirtbenchError, match="link is a symbolic link"):
        check_scratch(str(tmp_path / "link"))
    check_scratch(str(tmp_path / "real"))           # a private directory is fine
    check_scratch(str(tmp_path / "not-yet"))        # made by virtbench


def test_a_scratch_directory_others_can_write_without_sticky_bit_is_refused(tmp_path):
    d = tmp_path / "open"
    d.mkdir()
    os.chmod(d, 0o777)
    with pytest.raises(VirtbenchError, match="writable by other users"):
        check_scratch(str(d))


def test_a_sticky_shared_scratch_such_as_tmp_is_refused_a_directory_made_in_it_is_not(tmp_path):
    """virtbench writes fixed names in its scratch directory: in /tmp others could take them
    first. A directory of its own made in /tmp is fine (its parent is sticky)."""
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    with pytest.raises(VirtbenchError, match=r"writable by other users \(mode 1777\)"):
        check_scratch(str(shared))
    env = create(f"native:scratch={shared / 'mine'}")
    assert env.scratch_dir() == str(shared / "mine")
    assert os.lstat(shared / "mine").st_mode & 0o777 == 0o755


# -- manifests are data ------------------------------------------------------------------------
def plant(root: Path, name: str, **fields) -> Path:
    d = root / name
    d.mkdir(mode=0o700)
    (d / "manifest.json").write_text(json.dumps({"owner": DEAD_OWNER, "workdir": str(d),
                                                 **fields}))
    return d


def test_a_manifest_never_names_the_program_run(tmp_root, tmp_path, capsys):
    workroot.ensure()
    marker = tmp_path / "pwned"
    d = plant(tmp_root, "vbctr-evil", containers=["vbctr-evil"],
              podman=["/bin/sh", "-c", f"touch {marker}"])
    # the sweep's own podman argv is a harmless program here: it must not be the manifest's
    removed = watch.sweep("vbctr-", podman=["/bin/true"])
    assert removed == ["vbctr-evil"] and not d.exists()
    assert not marker.exists()


def test_a_foreign_pid_in_a_manifest_is_not_killed(tmp_root):
    workroot.ensure()
    victim = subprocess.Popen(["sleep", "60"])
    try:
        pidfile_victim = subprocess.Popen(["sleep", "60"])
        d = plant(tmp_root, "vbqemu-evil", qemu_pid=victim.pid)
        (d / "qemu.pid").write_text(str(pidfile_victim.pid))
        watch.sweep("vbqemu-")
        time.sleep(0.2)
        assert victim.poll() is None and pidfile_victim.poll() is None
        d2 = plant(tmp_root, "vbqemu-evil2", pidfile=str(d / "qemu.pid"))   # another's pidfile
        watch.sweep("vbqemu-")
        assert pidfile_victim.poll() is None and not d2.exists()
    finally:
        for p in (victim, pidfile_victim):
            p.kill()
            p.wait()


def test_only_a_qemu_with_this_work_directory_in_its_command_line_counts_as_ours(tmp_path):
    proc = subprocess.Popen(["sleep", "60", str(tmp_path / "vbqemu-x" / "qemu.pid")])
    try:   # the path matches, but the program is not QEMU
        assert not guardian.is_our_qemu(proc.pid, str(tmp_path / "vbqemu-x"), None)
    finally:
        proc.kill()
        proc.wait()


def test_qemu_started_before_the_manifest_is_not_ours(tmp_path):
    qemu = subprocess.run(["sh", "-c", "command -v qemu-system-x86_64"], capture_output=True,
                          text=True).stdout.strip()
    if not qemu:
        pytest.skip("no qemu-system-x86_64")
    workdir = str(tmp_path / "vbqemu-t")
    os.mkdir(workdir)              # QEMU writes its pidfile there (it exits if it cannot)
    proc = subprocess.Popen([qemu, "-machine", "none", "-nodefaults", "-display", "none",
                             "-S", "-pidfile", f"{workdir}/x.pid", "-monitor", "none"],
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not guardian.is_our_qemu(proc.pid, workdir, None):
            assert proc.poll() is None, f"QEMU exited: {proc.stderr.read()[-300:]}"
            time.sleep(0.05)
        assert guardian.is_our_qemu(proc.pid, workdir, None)
        assert not guardian.is_our_qemu(proc.pid, workdir, time.time() + 60)
        assert not guardian.is_our_qemu(proc.pid, str(tmp_path / "vbqemu-other"), None)
    finally:
        proc.kill()
        proc.wait()


def test_paths_names_and_devices_outside_virtbenchs_own_are_skipped(tmp_root, tmp_path):
    workroot.ensure()
    keep = tmp_path / "keep"
    keep.write_text("must survive")
    outside = tmp_path / "vbqemu-outside"
    outside.mkdir()
    (outside / "f").write_text("must survive")
    m = {"owner": DEAD_OWNER, "workdir": str(tmp_root / "vbqemu-w"), "created": time.time(),
         "netns": "default; rm -rf /", "extra_netns": ["vb-notours", "vb-abcdef-e"],
         "host_taps": ["eth0"], "loops": ["/dev/loop0", "/dev/sda"],
         "containers": ["someones-db", "--all"], "volumes": ["data"],
         "libvirt_domain": {"uri": "qemu+ext:///system?command=/bin/sh", "name": "production"},
         "owners_dir": str(tmp_path), "dirs": [str(outside), str(keep)], "qemu_pid": "1"}
    (tmp_root / "vbqemu-w").mkdir(mode=0o700)
    ok, warnings = guardian.validate(m, str(tmp_root))
    assert set(ok) == {"workdir", "created", "extra_netns"}
    assert ok["extra_netns"] == ["vb-abcdef-e"]     # the one name virtbench gives
    skipped = " ".join(warnings)
    for field in ("netns", "vb-notours", "host_taps", "/dev/loop0", "/dev/sda", "containers",
                  "volumes", "libvirt_domain", "dirs", "qemu_pid"):
        assert field in skipped
    # owners_dir is never read: unlinking happens in virtbench's own directory only
    guardian.cleanup(dict(m, extra_netns=[], netns=None), str(tmp_root))
    assert keep.exists() and (outside / "f").exists() and not (tmp_root / "vbqemu-w").exists()


def test_a_workdir_outside_the_root_or_not_ours_is_not_removed(tmp_root, tmp_path):
    workroot.ensure()
    victim = tmp_path / "vbqemu-victim"
    victim.mkdir()
    (victim / "data").write_text("keep")
    assert guardian.cleanup({"workdir": str(victim)}, str(tmp_root)) == []
    assert (victim / "data").exists()
    link = tmp_root / "vbqemu-link"
    link.symlink_to(victim)
    assert watch.sweep("vbqemu-") == [] and (victim / "data").exists()
    link.unlink()


def test_a_live_owners_directory_is_left_alone(tmp_root):
    workroot.ensure()
    d = tmp_root / "vbscratch-live"
    d.mkdir(mode=0o700)
    watch.write_manifest(d, watch.new_manifest(d))
    assert watch.sweep("vbscratch-") == [] and d.exists()
    dead = plant(tmp_root, "vbscratch-dead")
    assert watch.sweep("vbscratch-") == ["vbscratch-dead"] and not dead.exists()


def test_the_guardian_takes_podman_from_its_owner_not_from_the_manifest(tmp_root, tmp_path):
    """The guardian process on EOF without "done": the manifest's podman is ignored, the
    owner's argv (here a program that records its arguments) is what runs."""
    workroot.ensure()
    marker, record = tmp_path / "pwned", tmp_path / "record"
    d = tmp_root / "vbctr-g"
    d.mkdir(mode=0o700)
    m = watch.new_manifest(d, containers=["vbctr-g"],
                           podman=["/bin/sh", "-c", f"touch {marker}"])
    watch.write_manifest(d, m)
    fake = tmp_path / "fakepodman"
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> {record}\n")
    fake.chmod(0o755)
    g = watch.Guardian(d / "manifest.json", [str(fake)])
    os.close(g._fd)                  # the owner "dies": EOF without done
    g.proc.wait(timeout=60)
    assert not marker.exists() and not d.exists()
    assert "rm -f -t 0 --ignore vbctr-g" in record.read_text()


def test_sigkilled_owner_of_a_tcg_profile_directory_is_swept(tmp_root):
    """What a SIGKILLed run leaves of the plugin's sockets (vbexits-*) goes at the next sweep."""
    workroot.ensure()
    child = subprocess.Popen([sys.executable, "-c", (
        "import os, sys, time\n"
        "from virtbench.machinery.host import workroot\nfrom virtbench.machinery.host import watch\n"
        "d = workroot.make_dir('vbexits-')\nwatch.write_manifest(d, watch.new_manifest(d))\n"
        "print(d, flush=True)\ntime.sleep(60)\n")], stdout=subprocess.PIPE, text=True,
        env=dict(os.environ))
    d = Path(child.stdout.readline().strip())
    assert d.parent == tmp_root and d.exists()
    assert watch.sweep("vbexits-") == []           # its owner lives
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert watch.sweep("vbexits-") == [d.name] and not d.exists()
