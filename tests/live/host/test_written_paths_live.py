"""What virtbench writes as root, against the real local user `nobody` (issue 37;
host/writes.py, docs/security.md "What virtbench writes"; the unit cases with mode bits are
tests/unit/host/test_writes.py and tests/unit/cli/test_cli_writes.py).

`nobody` plants, in a directory it can write, a symbolic link to an empty file of root's, or
a world-writable store of its own. Root then runs the smallest real commands that open the
store (`run --env native --bench pi`) or write `-o`: each ends in one line, exit 2, and the
file the link names and the store are byte for byte what they were. Two kinds of directory:
sticky and world-writable like /var/tmp (which fs.protected_symlinks would cover, were it
on), and group-writable by nobody's group, without the sticky bit (which it does not)."""
from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from historykit import stepped_store

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("runuser"),
                               reason="planting as another user needs root and runuser")

NOBODY = pwd.getpwnam("nobody")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def as_nobody(script: str) -> None:
    subprocess.run(["runuser", "-u", "nobody", "--", "sh", "-euc", script], check=True,
                   timeout=30)


@pytest.fixture(params=["sticky-1777", "group-0775"])
def shared(request):
    """A directory of /var/tmp's (pytest's own are closed to other users) that `nobody` can
    write: 1777 as /var/tmp, or 0775 with nobody's group and no sticky bit."""
    d = Path(tempfile.mkdtemp(prefix="vbtest-written-", dir="/var/tmp"))
    if request.param == "sticky-1777":
        os.chmod(d, 0o1777)
    else:
        os.chown(d, 0, NOBODY.pw_gid)
        os.chmod(d, 0o775)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def victim(tmp_path):
    """An empty file of root's, in a directory only root can open."""
    v = tmp_path / "victim"
    v.write_bytes(b"")
    return v


@pytest.fixture
def store(tmp_path) -> Path:
    """A store of root's with nine runs, closed."""
    path = tmp_path / "S.db"
    stepped_store(f"sqlite:///{path}").engine.dispose()
    return path


def virtbench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "VIRTBENCH_STORE"}
    return subprocess.run([sys.executable, "-m", "virtbench.interface.cli.commands", *args],
                          capture_output=True, text=True, env=env, timeout=300, cwd=cwd)


RUN = ("run", "--env", "native", "--bench", "pi", "--trials", "1", "--quick", "--no-progress")


def refused(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for w in words:
        assert w in lines[0], lines[0]


@ROOT_ONLY
def test_a_run_whose_store_is_nobodys_link_to_a_file_of_roots_is_refused(shared, victim):
    link = shared / "s.db"
    as_nobody(f"ln -s {victim} {link}")
    before = sha(victim)
    refused(virtbench(*RUN, "--store", f"sqlite:///{link}"),
            f"store {link} is a symbolic link in {shared}", "can be written by other users")
    assert sha(victim) == before and victim.stat().st_size == 0
    assert sorted(p.name for p in shared.iterdir()) == ["s.db"]      # no -wal, no -journal


@ROOT_ONLY
def test_the_same_run_with_a_store_of_roots_completes(tmp_path):
    """The control: the command above does open a store for writing; in a directory of
    root's the same run completes and makes it."""
    own = tmp_path / "own" / "s.db"
    proc = virtbench(*RUN, "--store", f"sqlite:///{own}")
    assert proc.returncode == 0, proc.stderr
    assert own.read_bytes()[:16] == b"SQLite format 3\x00"
    assert own.parent.stat().st_mode & 0o777 == 0o755


@ROOT_ONLY
def test_a_world_writable_store_nobody_owns_is_refused_for_writing_and_reading(shared, store):
    """In a directory nobody can write: refused for the directory (SQLite's side files)
    before the file is looked at; the file rule is the next test's."""
    theirs = shared / "n.db"
    src = Path(tempfile.mkdtemp(prefix="vbtest-src-", dir="/var/tmp"))
    try:
        shutil.copy(store, src / "S.db")
        os.chmod(src, 0o755)
        os.chmod(src / "S.db", 0o644)
        as_nobody(f"cp {src / 'S.db'} {theirs}; chmod 666 {theirs}")
    finally:
        shutil.rmtree(src)
    assert theirs.stat().st_uid == NOBODY.pw_uid
    before = sha(theirs)
    for argv in (RUN, ("runs",)):
        refused(virtbench(*argv, "--store", f"sqlite:///{theirs}"),
                f"store {theirs}: its directory {shared} can be written by other users",
                "SQLite makes n.db-wal")
    assert sha(theirs) == before
    assert sorted(p.name for p in shared.iterdir()) == ["n.db"]


@ROOT_ONLY
def test_a_store_file_nobody_owns_in_a_directory_of_roots_is_refused(tmp_path, store):
    """Not nobody's directory this time: root's, but the store file in it is nobody's (and
    writable by anyone)."""
    d = tmp_path / "stores"
    d.mkdir(mode=0o755)
    theirs = d / "n.db"
    shutil.copy(store, theirs)
    os.chown(theirs, NOBODY.pw_uid, NOBODY.pw_gid)
    os.chmod(theirs, 0o666)
    before = sha(theirs)
    for argv in (RUN, ("runs",)):
        refused(virtbench(*argv, "--store", f"sqlite:///{theirs}"),
                f"store {theirs} is owned by uid {NOBODY.pw_uid}, not by root or you")
    assert sha(theirs) == before and sorted(os.listdir(d)) == ["n.db"]


@ROOT_ONLY
def test_o_through_nobodys_link_is_refused(shared, victim, store):
    link = shared / "out.json"
    as_nobody(f"ln -s {victim} {link}")
    before, store_before = sha(victim), sha(store)
    for argv in (("report", "--format", "json"), ("history", "--format", "json")):
        refused(virtbench(*argv, "--store", f"sqlite:///{store}", "-o", str(link)),
                f"-o {link} is a symbolic link in {shared}", "can be written by other users")
    assert sha(victim) == before and victim.stat().st_size == 0
    assert sha(store) == store_before and link.is_symlink()


@ROOT_ONLY
def test_o_onto_a_file_nobody_owns_is_refused_and_a_new_one_is_roots(shared, store):
    theirs = shared / "theirs.json"
    as_nobody(f"echo nobody > {theirs}")
    refused(virtbench("report", "--format", "json", "--store", f"sqlite:///{store}", "-o",
                      str(theirs)), f"-o {theirs} is owned by uid {NOBODY.pw_uid}")
    assert theirs.read_text() == "nobody\n"
    mine = shared / "mine.json"
    proc = virtbench("report", "--format", "json", "--store", f"sqlite:///{store}", "-o",
                     str(mine))
    assert proc.returncode == 0 and proc.stdout.strip() == f"wrote {mine}", proc.stderr
    st = mine.lstat()
    assert st.st_uid == 0 and not st.st_mode & 0o022
    assert sorted(p.name for p in shared.iterdir()) == ["mine.json", "theirs.json"]


@ROOT_ONLY
def test_o_onto_the_store_is_refused_by_any_name(tmp_path, store):
    (tmp_path / "alias.db").symlink_to(store)
    os.link(store, tmp_path / "hard.db")
    before = sha(store)
    for name in ("alias.db", "hard.db"):
        refused(virtbench("report", "--format", "json", "--store", "sqlite:///S.db", "-o", name,
                          cwd=tmp_path), f"-o {name} is the store this command uses")
    assert sha(store) == before
