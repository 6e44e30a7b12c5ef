"""The live part of tests/unit/host/test_planted_manifests.py: its tests that need root and this host.

Another user plants a work root and manifests; a root run never acts on them.

End to end with the real unprivileged user `nobody` (runuser): it makes the work directory
first, in a parent that is sticky and world-writable as /var/tmp is, and plants manifests
whose every field would run its script if virtbench ran a program or touched a path a
manifest names. A root `virtbench run --env native` then refuses in one line (exit 2, nothing
written), and the script's marker file never appears. Then: a manifest of any shape is
skipped field by field, and the guardian exits cleanly on it.
"""
from __future__ import annotations
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
import pytest

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("runuser"),
                               reason="planting as another user needs root and runuser")

NOBODY = pwd.getpwnam("nobody").pw_uid


@pytest.fixture
def shared_parent():
    """A parent like /var/tmp (mode 1777), where `nobody` can create names: a directory of
    /var/tmp itself, since pytest's own are closed to other users."""
    d = Path(tempfile.mkdtemp(prefix="vbtest-shared-", dir="/var/tmp"))
    os.chmod(d, 0o1777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def as_nobody(script: str) -> None:
    subprocess.run(["runuser", "-u", "nobody", "--", "sh", "-euc", script], check=True,
                   timeout=30)


def plant_as_nobody(parent: Path, root: Path) -> Path:
    """`nobody` makes `root` (or whatever `root` names) and plants manifests whose every field
    points at its script; returns the marker file the script would create."""
    marker = parent / "pwned"
    evil = parent / "evil.sh"
    as_nobody(f"printf '#!/bin/sh\\ntouch {marker}\\n' > {evil}; chmod 755 {evil}")
    for name in ("vbqemu-planted", "vbctr-planted", "vbscratch-planted", "vbexits-planted"):
        d = root / name
        manifest = {
            "owner": "1 0", "workdir": str(d), "created": 0,
            "podman": [str(evil)], "qemu": str(evil), "virsh": str(evil),
            "libvirt_domain": {"uri": f"qemu+ext:///system?command={evil}",
                               "name": "virtbench-vb-abcdef"},
            "netns": f"vb-abcdef; {evil}", "extra_netns": [f"$({evil})"],
            "host_taps": [f"`{evil}`"], "containers": ["--all", f"vbctr-x;{evil}"],
            "volumes": [str(evil)], "loops": [str(evil), "/dev/loop0"],
            "dirs": [str(parent), "/etc"], "qemu_pid": 1, "pidfile": str(evil)}
        as_nobody(f"mkdir -p {d} && cat > {d}/manifest.json <<'EOF'\n"
                  f"{json.dumps(manifest)}\nEOF")
    return marker


def root_run(parent: Path, tmp_path: Path) -> tuple[subprocess.CompletedProcess, Path]:
    store = tmp_path / "store.db"
    env = dict(os.environ, VIRTBENCH_TMP=str(parent), VIRTBENCH_STORE=f"sqlite:///{store}")
    proc = subprocess.run([sys.executable, "-m", "virtbench.interface.cli.commands", "run", "--env", "native",
                           "--bench", "pi", "--trials", "1", "--quick", "--no-progress"],
                          capture_output=True, text=True, env=env, timeout=300)
    return proc, store


def assert_refused(proc, store: Path, *words: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for w in words:
        assert w in lines[0], lines[0]
    assert not store.exists()                      # nothing written


@ROOT_ONLY
def test_a_work_root_nobody_made_first_is_refused_and_nothing_it_plants_runs(shared_parent,
                                                                            tmp_path):
    root = shared_parent / "virtbench"
    marker = plant_as_nobody(shared_parent, root)
    assert root.stat().st_uid == NOBODY
    proc, store = root_run(shared_parent, tmp_path)
    assert_refused(proc, store, str(root), f"owned by uid {NOBODY}", "VIRTBENCH_TMP")
    time.sleep(0.5)                                # a guardian or sweep would have run by now
    assert not marker.exists()
    assert sorted(p.name for p in root.iterdir()) == [
        "vbctr-planted", "vbexits-planted", "vbqemu-planted", "vbscratch-planted"]


@ROOT_ONLY
def test_a_work_root_nobody_symlinked_to_its_own_directory_is_refused(shared_parent, tmp_path):
    own = shared_parent / "nobodys"
    marker = plant_as_nobody(shared_parent, own)
    as_nobody(f"chmod 700 {own}; ln -s {own} {shared_parent / 'virtbench'}")
    proc, store = root_run(shared_parent, tmp_path)
    assert_refused(proc, store, str(shared_parent / "virtbench"), "is a symbolic link")
    assert not marker.exists() and (own / "vbqemu-planted" / "manifest.json").exists()


@ROOT_ONLY
def test_a_parent_owned_by_another_user_is_refused(shared_parent, tmp_path):
    """nobody's own directory as VIRTBENCH_TMP: whatever virtbench makes in it, nobody could
    rename away and replace."""
    theirs = shared_parent / "theirs"
    as_nobody(f"mkdir -m 755 {theirs}")
    proc, store = root_run(theirs, tmp_path)
    assert_refused(proc, store, str(theirs / "virtbench"), f"is owned by uid {NOBODY}")
    assert not (theirs / "virtbench").exists()     # refused before anything is made in it


@ROOT_ONLY
def test_the_same_run_with_a_work_root_of_its_own_completes(shared_parent, tmp_path):
    """The control: beside nobody's files in the shared parent, a run makes its own work
    root (0700, root's) and completes; nobody's script still never runs."""
    marker = plant_as_nobody(shared_parent, shared_parent / "elsewhere")
    proc, store = root_run(shared_parent, tmp_path)
    assert proc.returncode == 0, proc.stderr
    root = shared_parent / "virtbench"
    st = os.lstat(root)
    assert st.st_uid == 0 and st.st_mode & 0o777 == 0o700
    assert store.exists() and not marker.exists()
    assert list(root.iterdir()) == []               # the run's private directories are gone
