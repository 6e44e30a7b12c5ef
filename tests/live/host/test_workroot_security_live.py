"""The live part of tests/unit/host/test_workroot_security.py: its tests that need root and this host.

A local user must not be able to make a root run act through the work directory.

The work root is refused unless virtbench can trust it; manifests in it are data: every
field is checked against what virtbench itself creates before anything is done with it.
Ownership cases use the real unprivileged user `nobody` (the suite runs as root).
"""
from __future__ import annotations
import json
import os
import pwd
import subprocess
import sys
from pathlib import Path
import pytest
from virtbench.machinery.host import workroot
from virtbench.measure.environments import create
from virtbench.core.errors import VirtbenchError
from virtbench.machinery.host import watch

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="ownership cases need root")

NOBODY = pwd.getpwnam("nobody").pw_uid

DEAD_OWNER = "1 0"        # pid 1 never has start time 0: an owner that is gone


@pytest.fixture
def tmp_root(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTBENCH_TMP", str(tmp_path))
    return tmp_path / "virtbench"


def cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "virtbench.interface.cli.commands", *args], capture_output=True,
                          text=True, env=env, timeout=120)


@needs_root
def test_another_users_work_root_is_refused(tmp_root):
    tmp_root.mkdir(mode=0o700)
    os.chown(tmp_root, NOBODY, -1)
    with pytest.raises(VirtbenchError, match=rf"{tmp_root} is owned by uid {NOBODY}.*remove it"):
        workroot.ensure()


@needs_root
def test_a_run_with_a_planted_work_root_exits_2_in_one_line_and_writes_nothing(tmp_path):
    root = tmp_path / "tmp" / "virtbench"
    root.mkdir(parents=True, mode=0o700)
    os.chown(root, NOBODY, -1)
    marker = tmp_path / "pwned"
    planted = root / "vbctr-planted"
    planted.mkdir()
    (planted / "manifest.json").write_text(json.dumps(
        {"owner": DEAD_OWNER, "workdir": str(planted), "containers": ["vbctr-x"],
         "podman": ["/bin/sh", "-c", f"touch {marker}"]}))
    store = tmp_path / "store.db"
    env = dict(os.environ, VIRTBENCH_TMP=str(tmp_path / "tmp"),
               VIRTBENCH_STORE=f"sqlite:///{store}")
    proc = cli("run", "--env", "native", "--bench", "pi", "--trials", "1", "--quick", env=env)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(root) in lines[0] and "VIRTBENCH_TMP" in lines[0]
    assert not store.exists() and not marker.exists() and planted.exists()


@needs_root
def test_a_scratch_name_another_user_took_first_is_refused(tmp_path, monkeypatch):
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    taken = shared / "taken"
    taken.mkdir()
    os.chown(taken, NOBODY, -1)
    with pytest.raises(VirtbenchError, match=f"taken is owned by uid {NOBODY}"):
        create(f"native:scratch={taken}").scratch_dir()
    # taken between virtbench's look and its mkdir: the look after the mkdir refuses it
    late = shared / "late"
    env = create(f"native:scratch={late}")
    real_makedirs = os.makedirs

    def someone_first(path, mode=0o777, exist_ok=False):
        if str(path) == str(late) and not late.exists():
            late.symlink_to(tmp_path)
        return real_makedirs(path, mode=mode, exist_ok=exist_ok)
    monkeypatch.setattr(os, "makedirs", someone_first)
    with pytest.raises(VirtbenchError, match="late is a symbolic link"):
        env.scratch_dir()


@needs_root
def test_a_run_with_a_shared_scratch_exits_2_in_one_line_and_writes_nothing(tmp_path):
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    store = tmp_path / "store.db"
    env = dict(os.environ, VIRTBENCH_TMP=str(tmp_path / "work"),
               VIRTBENCH_STORE=f"sqlite:///{store}")
    proc = cli("run", "--env", f"native:scratch={shared}", "--bench", "dd-write", "--trials",
               "1", "--quick", env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert f"scratch directory {shared} is writable by other users" in line
    assert "leave scratch= out" in line and not store.exists()
    assert list(shared.iterdir()) == []


# -- manifests are data ------------------------------------------------------------------------
def plant(root: Path, name: str, **fields) -> Path:
    d = root / name
    d.mkdir(mode=0o700)
    (d / "manifest.json").write_text(json.dumps({"owner": DEAD_OWNER, "workdir": str(d),
                                                 **fields}))
    return d


@needs_root
def test_a_directory_in_the_root_owned_by_someone_else_is_skipped(tmp_root, capsys):
    workroot.ensure()
    d = plant(tmp_root, "vbctr-nobodys")
    os.chown(d, NOBODY, -1)
    assert watch.sweep("vbctr-", podman=["/bin/true"]) == []
    assert d.exists() and "skipped by the sweep" in capsys.readouterr().err


@needs_root
def test_a_loop_device_is_detached_only_when_backed_by_a_file_of_the_work_directory(tmp_root,
                                                                                  tmp_path):
    workroot.ensure()
    outside = tmp_path / "outside.img"
    subprocess.run(["truncate", "-s", "1M", str(outside)], check=True)
    proc = subprocess.run(["losetup", "--find", "--show", str(outside)], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        pytest.skip(f"no loop device here: {proc.stderr.strip()}")
    loop = proc.stdout.strip()
    try:
        d = plant(tmp_root, "vbqemu-loop", loops=[loop])
        watch.sweep("vbqemu-")
        assert not d.exists()
        back = subprocess.run(["losetup", "-n", "-O", "BACK-FILE", loop], capture_output=True,
                              text=True).stdout.strip()
        assert back == str(outside)                  # still attached: not ours
    finally:
        subprocess.run(["losetup", "-d", loop])
    inside_dir = tmp_root / "vbqemu-own"
    inside_dir.mkdir(mode=0o700)
    img = inside_dir / "scratch.raw"
    subprocess.run(["truncate", "-s", "1M", str(img)], check=True)
    loop = subprocess.run(["losetup", "--find", "--show", str(img)], capture_output=True,
                          text=True, check=True).stdout.strip()
    (inside_dir / "manifest.json").write_text(json.dumps(
        {"owner": DEAD_OWNER, "workdir": str(inside_dir), "loops": [loop]}))
    watch.sweep("vbqemu-")
    assert not inside_dir.exists()
    listed = subprocess.run(["losetup", "-n", "-O", "BACK-FILE", loop], capture_output=True,
                            text=True).stdout.strip()
    assert str(img) not in listed                   # ours: detached
