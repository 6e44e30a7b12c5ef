"""A program virtbench runs as root that it did not install itself (another QEMU, named with
qemu:binary=): trusted only once checked. The path is resolved once (symbolic links followed
here, never again: what runs is the resolved path), and then every directory from / down to
the file must be a directory owned by root or by us that no one else can write (or sticky),
and the file a regular file owned by root or by us, writable by no one else. Anything else is
one line naming the path and what is wrong, and nothing is run."""
from __future__ import annotations

import os
import stat
from pathlib import Path

from ...core.errors import VirtbenchError
from .workroot import parent_problem


def file_problem(st: os.stat_result, uid: int | None = None, directory: bool = False
                 ) -> str | None:
    """Why an entry with this lstat() result is not one we may run, read or (`directory`)
    write in as root (pure): a symbolic link, not a regular file (a directory), owned by
    someone other than root or us, or writable by other users."""
    uid = os.geteuid() if uid is None else uid
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if directory and not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if not directory and not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if st.st_uid not in (0, uid):
        return f"is owned by uid {st.st_uid}, not by root or you"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is writable by other users (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def path_problem(path: Path, leaf_is_dir: bool = False) -> str | None:
    """Why the resolved `path` (no symlink left in it) is not trusted, or None: each
    directory on it, then the leaf (a file, or with `leaf_is_dir` a directory)."""
    parts = path.parts
    for i in range(1, len(parts)):
        d = Path(*parts[:i])
        why = parent_problem(os.stat(d))
        if why:
            return f"its directory {d} {why}"
    return file_problem(os.lstat(path), directory=leaf_is_dir)


def resolve_trusted(path: str | Path, what: str, leaf_is_dir: bool = False) -> Path:
    """`path` resolved (symlinks followed once) and checked; VirtbenchError (one line naming
    `what`, the path and the fix) when it is missing or not trusted."""
    given = Path(path)
    named = f"{what}{path}" if what.endswith("=") else f"{what} {path}"
    if not given.is_absolute():
        raise VirtbenchError(f"{named} is not an absolute path; write the full path")
    try:
        real = Path(os.path.realpath(given, strict=True))
    except OSError:
        raise VirtbenchError(f"{named} does not exist") from None
    why = path_problem(real, leaf_is_dir)
    if why:
        shown = f"{named} (-> {real})" if real != given else named
        raise VirtbenchError(f"{shown} {why}; virtbench runs as root and runs only "
                             "files that root or you own and no one else can change")
    return real
