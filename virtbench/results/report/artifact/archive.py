"""An artifact on disk: a directory, or a .tar.gz (one top directory inside), read into its
files (relative POSIX path -> bytes) and written from them. The side effects of artifacts.

Reading trusts nothing it reads: a directory's entries are opened without following a
link (a link, a device or a FIFO is one line); a tar member is checked by tarfile's `data`
filter (no absolute path, no `..`, no link out) and must be a regular file or directory,
with the sizes it claims, MAX_FILES members and MAX_BYTES at most. Everything read is then
checked against SHA256SUMS (manifest.verified) before any of it is used.

Writing (docs/security.md, "What virtbench writes"): PATH is walked as every `-o` is
(host/pathwalk.py: no link where others can write); a .tar.gz must not exist (it is written
whole into a new file of an unpredictable name beside it, then renamed); a directory must
not exist, or be an empty one of root's (or yours) that no one else can write: it is made
fresh (0755), its files made one by one in it, never through a link."""
from __future__ import annotations

import io
import os
import stat
import tarfile
import time
import zlib
from pathlib import PurePosixPath

from ....core.errors import VirtbenchError
from ....machinery.host.pathwalk import PathRefused, walk
from ....machinery.host.trusted import file_problem
from ....machinery.host.writes import said, write_atomic
from .manifest import MAX_BYTES, MAX_FILES, TamperedArtifact

TAR_SUFFIX = ".tar.gz"
OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FIX = "give a new name (a directory, or a file ending .tar.gz) in a directory that exists"


def is_tar(path: str) -> bool:
    return str(path).endswith(TAR_SUFFIX)


def top_name(path: str) -> str:
    """The directory a .tar.gz's files sit in: its name without .tar.gz."""
    return PurePosixPath(str(path)).name[:-len(TAR_SUFFIX)] or "artifact"


# -- reading ---------------------------------------------------------------------------------
def read_artifact(path: str) -> dict[str, bytes]:
    """The files of the artifact at `path` (a directory, or a file ending .tar.gz)."""
    try:
        return _read_tar(path) if is_tar(path) else _read_dir(path)
    except OSError as exc:
        raise VirtbenchError(f"artifact {path}: cannot read it ({exc.strerror or exc}); give "
                             "the directory or .tar.gz `virtbench export` wrote") from None


def _read_dir(path: str) -> dict[str, bytes]:
    fd = os.open(path, OPEN_DIR)
    files: dict[str, bytes] = {}
    try:
        _read_into(fd, "", files, path)
    finally:
        os.close(fd)
    return files


def _read_into(fd: int, prefix: str, files: dict[str, bytes], path: str) -> None:
    for entry in os.scandir(fd):
        name = prefix + entry.name
        st = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            sub = os.open(entry.name, OPEN_DIR, dir_fd=fd)
            try:
                _read_into(sub, name + "/", files, path)
            finally:
                os.close(sub)
        elif stat.S_ISREG(st.st_mode):
            files[name] = _read_file(fd, entry.name, name, sum(map(len, files.values())))
        else:
            raise TamperedArtifact(f"artifact {path}: {name} is not a regular file (a link, "
                                   "a device?); nothing was imported")
        if len(files) > MAX_FILES:
            raise TamperedArtifact(f"artifact {path}: more than {MAX_FILES} files; nothing "
                                   "was imported")


def _read_file(dir_fd: int, entry: str, name: str, so_far: int) -> bytes:
    fd = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                 dir_fd=dir_fd)
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_BYTES - so_far + 1)
    if so_far + len(data) > MAX_BYTES:
        raise TamperedArtifact(f"artifact: {name} takes it past {MAX_BYTES >> 20} MiB; "
                               "nothing was imported")
    return data


def _member_problem(m: tarfile.TarInfo) -> str | None:
    """Why a tar member may not be read: what tarfile's `data` filter refuses (Python
    3.11.4 and later; the same rules are checked here for an older one): an absolute path,
    `..`, a link; and anything but a regular file or a directory."""
    data_filter = getattr(tarfile, "data_filter", None)
    if data_filter is not None:
        try:
            data_filter(m, "/artifact")
        except tarfile.FilterError as exc:
            return str(exc)
    parts = PurePosixPath(m.name).parts
    if m.name.startswith("/") or ".." in parts or not parts:
        return f"{m.name!r} is an absolute path or leads out with '..'"
    if not (m.isreg() or m.isdir()):
        return f"{m.name!r} is not a regular file or a directory (a link, a device?)"
    return None


def _read_tar(path: str) -> dict[str, bytes]:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as raw:
        if not stat.S_ISREG(os.fstat(raw.fileno()).st_mode):
            raise TamperedArtifact(f"artifact {path}: not a regular file; nothing was imported")
        try:
            return _members(tarfile.open(fileobj=raw, mode="r:gz"), path)
        except (tarfile.TarError, EOFError, zlib.error) as exc:
            raise TamperedArtifact(f"artifact {path}: not a readable .tar.gz ({exc}); nothing "
                                   "was imported") from None


def _members(tar: tarfile.TarFile, path: str) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    tops, total = set(), 0
    for n, m in enumerate(tar, 1):
        why = _member_problem(m)
        if why or n > MAX_FILES:
            raise TamperedArtifact(f"artifact {path}: member {why or f'{n}: too many'}; "
                                   "nothing was imported")
        parts = PurePosixPath(m.name).parts
        tops.add(parts[0])
        total += m.size
        if total > MAX_BYTES:
            raise TamperedArtifact(f"artifact {path}: its members take more than "
                                   f"{MAX_BYTES >> 20} MiB; nothing was imported")
        if m.isreg():
            if len(parts) < 2:
                raise TamperedArtifact(f"artifact {path}: member {m.name!r} is outside its "
                                       "top directory; nothing was imported")
            data = tar.extractfile(m).read(m.size + 1)
            if len(data) != m.size:
                raise TamperedArtifact(f"artifact {path}: member {m.name!r} is not the size "
                                       "it says; nothing was imported")
            files["/".join(parts[1:])] = data
    if len(tops) > 1:
        raise TamperedArtifact(f"artifact {path}: its members are not in one top directory; "
                               "nothing was imported")
    return files


# -- writing ---------------------------------------------------------------------------------
def check_target(path: str) -> None:
    """Refuse PATH before anything is read: one line, nothing written."""
    named = f"--artifact {path}"
    try:
        with walk(path) as r:
            if len(r.rest) > 1:
                raise VirtbenchError(f"{named}: its directory {r.where / r.rest[0]} does not "
                                     f"exist; {FIX}")
            if r.leaf is None:
                return
            if is_tar(path) or not stat.S_ISDIR(r.leaf.st_mode):
                raise VirtbenchError(f"{named} exists; an artifact never replaces a file: "
                                     f"{FIX}")
            why = file_problem(r.leaf, directory=True)
            if why:
                raise VirtbenchError(f"{named} {why}; {FIX}")
            sub = os.open(r.rest[0], OPEN_DIR, dir_fd=r.fd)
            try:
                if os.listdir(sub):
                    raise VirtbenchError(f"{named} is a directory that is not empty; {FIX}")
            finally:
                os.close(sub)
    except PathRefused as exc:
        raise VirtbenchError(f"{said(named, path, exc)}; {FIX}") from None
    except OSError as exc:
        raise VirtbenchError(f"{named}: cannot read it ({exc.strerror}); {FIX}") from None


def write_artifact(path: str, files: dict[str, bytes]) -> None:
    """Write `files` as the artifact PATH (checked again first)."""
    check_target(path)
    try:
        with walk(path) as r:
            if is_tar(path):
                write_atomic(r.fd, r.rest[0], tar_bytes(files, top_name(path)))
            else:
                _write_dir(r.fd, r.rest[0], r.leaf is None, files)
    except PathRefused as exc:
        raise VirtbenchError(f"{said(f'--artifact {path}', path, exc)}; {FIX}") from None
    except OSError as exc:
        raise VirtbenchError(f"--artifact {path}: cannot write it ({exc.strerror}); "
                             f"{FIX}") from None


def _write_dir(parent: int, name: str, make: bool, files: dict[str, bytes]) -> None:
    if make:
        os.mkdir(name, 0o755, dir_fd=parent)
    fd = os.open(name, OPEN_DIR, dir_fd=parent)
    try:
        why = file_problem(os.fstat(fd), directory=True)
        if why or os.listdir(fd):
            raise VirtbenchError(f"--artifact {name} {why or 'changed while it was written'}"
                                 f"; {FIX}")
        for rel in sorted(files):
            *dirs, leaf = rel.split("/")
            at = os.dup(fd)
            try:
                for d in dirs:
                    if d not in os.listdir(at):
                        os.mkdir(d, 0o755, dir_fd=at)
                    at = _swap(at, os.open(d, OPEN_DIR, dir_fd=at))
                write_atomic(at, leaf, files[rel])
            finally:
                os.close(at)
    finally:
        os.close(fd)


def _swap(old: int, new: int) -> int:
    os.close(old)
    return new


def tar_bytes(files: dict[str, bytes], top: str) -> bytes:
    """`files` as a .tar.gz's bytes, under the directory `top`: root's, 0644/0755. Pure but
    for the time stamped on the members."""
    buf, when = io.BytesIO(), int(time.time())
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        dirs = sorted({"/".join(n.split("/")[:i]) for n in files
                       for i in range(1, n.count("/") + 1)})
        for d in ["", *dirs]:
            info = tarfile.TarInfo(f"{top}/{d}".rstrip("/"))
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, when
            tar.addfile(info)
        for name in sorted(files):
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size, info.mode, info.mtime = len(files[name]), 0o644, when
            tar.addfile(info, io.BytesIO(files[name]))
    return buf.getvalue()
