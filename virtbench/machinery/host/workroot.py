"""The work root: the one directory under which virtbench keeps what a run creates on this host
(guests' work directories, containers' manifests, the exit-profile plugin's sockets, the
default scratch directory of bare metal), and the only place its crash sweep looks.

virtbench runs as root, and the default parent, /var/tmp, is writable by every user. So the
root is trusted only once checked: virtbench creates it itself (mode 0700), and before each use
it must be a real directory (not a symlink), owned by the running user, writable by no one
else, in a parent that others cannot rename it out of (sticky or not writable by others).
Anything else is one line naming the path and the fix, and nothing is run or written.
Entries are checked the same way before the sweep reads them (see `owned_entries`).
"""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from ...core.errors import VirtbenchError

ENV = "VIRTBENCH_TMP"
NAME = "virtbench"


def root() -> Path:
    """Where the work root is ($VIRTBENCH_TMP/virtbench, default /var/tmp/virtbench)."""
    return Path(os.environ.get(ENV) or "/var/tmp") / NAME


def trust_problem(st: os.stat_result, uid: int | None = None) -> str | None:
    """Why a directory with this lstat() result is not one we may trust, or None (pure)."""
    uid = os.geteuid() if uid is None else uid
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if st.st_uid != uid:
        return f"is owned by uid {st.st_uid}, not by you (uid {uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is writable by other users (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def parent_problem(st: os.stat_result, uid: int | None = None) -> str | None:
    """Why a parent directory lets others replace what is in it, or None (pure): writable by
    others without the sticky bit, owned by another user who is not root, or a symlink."""
    uid = os.geteuid() if uid is None else uid
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if st.st_uid not in (0, uid):
        return f"is owned by uid {st.st_uid}"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not st.st_mode & stat.S_ISVTX:
        return f"is writable by other users without the sticky bit (mode " \
               f"{stat.S_IMODE(st.st_mode):04o})"
    return None


def check_dir(path: Path, what: str = "work directory", env: str = ENV) -> None:
    """Refuse a directory we must not trust: one line naming it and the fix (`env`: the
    variable that names another place)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise VirtbenchError(f"{what} {path} does not exist") from None
    why = trust_problem(st)
    if why:
        raise VirtbenchError(f"{what} {path} {why}; remove it (as its owner) or set ${env} to "
                             f"a directory only you can write")
    check_parent(path, what, env)


def check_parent(path: Path, what: str = "work directory", env: str = ENV) -> None:
    """Refuse a directory whose parent lets others rename it away and put their own in its
    place: one line naming it and the fix."""
    why = parent_problem(os.stat(path.parent))
    if why:
        raise VirtbenchError(f"{what} {path}: its parent {path.parent} {why}; set ${env} to a "
                             f"directory only you can write")


def ensure() -> Path:
    """The work root, created (0700) if missing, checked in any case; VirtbenchError if it
    cannot be trusted."""
    path = root()
    try:
        os.makedirs(path.parent, exist_ok=True)
        check_parent(path)          # refused before anything is made in it
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise VirtbenchError(f"work directory {path} cannot be created ({exc.strerror}); set "
                             f"${ENV} to a directory you can write") from None
    check_dir(path)
    return path


def make_dir(prefix: str) -> Path:
    """A new private directory (0700, ours) directly in the checked work root."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=ensure()))


def within(path: str | os.PathLike, prefixes: tuple[str, ...]) -> Path | None:
    """`path` if it is a directory directly inside the work root, named with one of
    `prefixes`, not a symlink and ours; else None. What the sweep and the guardian may delete."""
    p = Path(os.path.normpath(str(path)))
    if p.parent != root() or not p.name.startswith(prefixes):
        return None
    try:
        st = os.lstat(p)
    except OSError:
        return None
    return p if trust_problem(st) is None else None


def owned_entries(prefixes: tuple[str, ...]) -> list[tuple[Path, str | None]]:
    """The work root's entries named with `prefixes` that the sweep may act on: (directory,
    why it is skipped or None). Nothing is returned when the root is missing; a root that
    cannot be trusted raises (the caller refuses to run)."""
    path = root()
    if not os.path.lexists(path):
        return []
    check_dir(path)
    out = []
    for entry in sorted(path.iterdir()):
        if not entry.name.startswith(prefixes):
            continue
        out.append((entry, None if within(entry, prefixes) else
                    "not a private directory of yours (symlink, other owner or mode)"))
    return out
