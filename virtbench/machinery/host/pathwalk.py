"""A path walked the way root may follow it (host/writes.py uses it for every path virtbench
writes): from / one name at a time, each directory held by an O_PATH descriptor, nothing
followed by accident. A symbolic link met on the way (the last name included, unless the
caller keeps it) is followed only when the directory that holds it is one no other user can
write: root's or yours, with no group or other write bit, sticky or not. In any other
directory the link is someone else's choice of where root writes, and the walk refuses it.

What the walk reaches is the deepest directory that exists (its descriptor and real path),
the names still to come below it, the stat() of every directory on the way from / down,
and the last name's lstat() when it exists. Pure rules here take stat() results; the walk is
the only part that touches the file system."""
from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterator

MAX_LINKS = 40            # as the kernel's own limit on links followed in one path
DIR_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class PathRefused(Exception):
    """Why a path cannot be walked: a clause naming its part (`X is a symbolic link in D,
    which ...`); callers put it into their own one line with the fix. `link`: the clause is
    about a link where others can write."""

    def __init__(self, clause: str, link: bool = False):
        super().__init__(clause)
        self.link = link


def others_write(st: os.stat_result, uid: int | None = None) -> str | None:
    """Why users other than root and us can write in (or to) the entry with this stat()
    result, as a clause (`is owned by uid N`, `can be written by other users (mode M)`), or
    None (pure). The sticky bit does not count: it stops renames, not new names."""
    uid = os.geteuid() if uid is None else uid
    if st.st_uid not in (0, uid):
        return f"is owned by uid {st.st_uid}"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"can be written by other users (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


@dataclass
class Reached:
    """The end of a walk (see the module). `fd` is closed when the walk's `with` ends."""
    fd: int
    where: Path
    rest: tuple[str, ...]
    chain: list[tuple[Path, os.stat_result]]
    leaf: os.stat_result | None

    @property
    def path(self) -> Path:
        """The real path walked to (the missing names, if any, joined on)."""
        return self.where.joinpath(*self.rest)


def _names(path: str) -> list[str]:
    """The names of `path` (no leading /), to be popped from the end: first name last."""
    return list(reversed([p for p in PurePosixPath(path).parts if p != "/"]))


@contextlib.contextmanager
def walk(path: str | os.PathLike, follow_leaf: bool = True) -> Iterator[Reached]:
    """Walk `path` (relative: from the current directory); PathRefused when a link sits
    where others can write, a name on the way is not a directory, or something changed
    under the walk. `follow_leaf`: follow a link in the last name (else it is the leaf)."""
    reached = _walk(os.path.join(os.getcwd(), os.fspath(path)), follow_leaf)
    try:
        yield reached
    finally:
        os.close(reached.fd)


def _walk(path: str, follow_leaf: bool) -> Reached:
    todo = _names(path)
    fd = os.open("/", DIR_FLAGS)
    chain = [(Path("/"), os.fstat(fd))]
    links = 0
    try:
        while todo:
            name = todo.pop()
            where = chain[-1][0]
            if name == "..":
                if len(chain) > 1:
                    fd = _swap(fd, os.open("..", DIR_FLAGS, dir_fd=fd))
                    chain.pop()
                continue
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                return Reached(fd, where, _missing(where, name, todo), chain, None)
            if stat.S_ISLNK(st.st_mode) and (todo or follow_leaf):
                links += 1
                target = _follow(fd, where / name, chain[-1][1], links)
                if target.startswith("/"):
                    fd = _swap(fd, os.open("/", DIR_FLAGS))
                    chain = chain[:1]
                todo.extend(_names(target))
                continue
            if not todo:
                return Reached(fd, where, (name,), chain, st)
            fd, st = _enter(fd, name, st, where)
            chain.append((where / name, st))
        raise PathRefused(f"{chain[-1][0]} is a directory")      # `/`, or a path ending in ..
    except BaseException:
        os.close(fd)
        raise


def _missing(where: Path, name: str, todo: list[str]) -> tuple[str, ...]:
    """The names from the first missing one on (no link can be among them)."""
    rest = (name, *reversed(todo))
    if ".." in rest:
        raise PathRefused(f"{where / name} does not exist")
    return rest


def _follow(fd: int, link: Path, dir_st: os.stat_result, links: int) -> str:
    """The target of `link` (in the directory `fd`, whose stat() is `dir_st`), once it may
    be followed."""
    why = others_write(dir_st)
    if why:
        raise PathRefused(f"{link} is a symbolic link in {link.parent}, which {why}",
                          link=True)
    if links > MAX_LINKS:
        raise PathRefused(f"{link}: more than {MAX_LINKS} symbolic links on the way")
    return os.readlink(link.name, dir_fd=fd)


def _enter(fd: int, name: str, st: os.stat_result, where: Path) -> tuple[int, os.stat_result]:
    """The directory `name` in `fd` opened (fd swapped for it) and its stat(), once it is
    the directory lstat() saw."""
    if not stat.S_ISDIR(st.st_mode):
        raise PathRefused(f"{where / name} is not a directory")
    try:
        new = os.open(name, DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        raise PathRefused(f"{where / name} changed while it was checked ({exc.strerror})") \
            from None
    got = os.fstat(new)
    if (got.st_dev, got.st_ino) != (st.st_dev, st.st_ino):
        os.close(new)
        raise PathRefused(f"{where / name} changed while it was checked")
    return _swap(fd, new), got


def _swap(old: int, new: int) -> int:
    os.close(old)
    return new
