"""What virtbench writes as root, and the one check before it (docs/security.md, "What
virtbench writes"): the store's SQLite file, and the files `-o` names.

Every such path is walked first (host/pathwalk.py): a symbolic link on it is followed only
out of a directory no other user can write. Then:

- **the store** (`check_store`; SQLite opens it, and files beside it, by name): every
  directory above it must be one in which others cannot rename what is not theirs
  (`parent_problem`), its own directory one no one else can write at all, sticky or not
  (SQLite makes S.db-wal, S.db-shm and S.db-journal there by those fixed names), and the file,
  and each of those beside it that exists, a regular file of root's or yours that no one
  else can write. A PostgreSQL URL has no file: nothing to check.
- **an `-o` file** (`check_output`, `write_output`): a file already there must be a regular
  file of root's or yours that no one else can write, and neither the store in use (the same
  device and inode: any spelling of its path, a symbolic or a hard link) nor any SQLite
  database or write-ahead log. The text goes into a new file of an unpredictable name in the
  same directory (O_EXCL, through the directory's descriptor), renamed over the name at the
  end: a failed write leaves the old file whole, and a name swapped meanwhile is replaced,
  never written through.

Each refusal is one line (VirtbenchError) naming the path, what is wrong and the fix."""
from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path
from typing import Iterable

from ...core.errors import VirtbenchError
from .pathwalk import PathRefused, Reached, others_write, walk
from .trusted import file_problem
from .workroot import parent_problem

SQLITE_HEADER = b"SQLite format 3\x00"
WAL_MAGIC = (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")
SIDE_FILES = ("-wal", "-shm", "-journal")
STORE_FIX = "keep the store in a directory only root (or you) can write, as a file of " \
            "root's (or yours) that no one else can write"
OUTPUT_FIX = "give another file name"


def store_file(url: str | None) -> Path | None:
    """The SQLite file store `url` (default: $VIRTBENCH_STORE, else the default store)
    names, as given (no link followed), or None when it names none (PostgreSQL, memory)."""
    from ...foundations.store.connection import default_url, normalize_url, sqlite_path
    raw = url or default_url()
    if "://" not in raw:           # a bare path: normalize_url would follow its links
        return Path(raw)
    return sqlite_path(normalize_url(raw))


def content_problem(head: bytes) -> str | None:
    """Why a file that starts with `head` must never be replaced by a report (pure)."""
    if head.startswith(SQLITE_HEADER):
        return "is a SQLite database"
    if head[:4] in WAL_MAGIC:
        return "is a SQLite write-ahead log"
    return None


def store_problem(r: Reached) -> str | None:
    """Why the store the walk `r` reached may not be opened as root, as a clause after
    `store PATH`, or None (pure but for the side files' lstat()). Missing directories are
    fine when what exists above them is (the caller makes them)."""
    final = len(r.rest) == 1              # the store's own directory exists
    above = r.chain[:-1] if final else r.chain
    for d, st in above:
        why = parent_problem(st)
        if why:
            return f": its directory {d} {why}"
    if not final:
        return None
    d, st = r.chain[-1]
    why = others_write(st)
    if why:
        name = r.rest[0]
        return (f": its directory {d} {why}, and SQLite makes {name}-wal, {name}-shm and "
                f"{name}-journal there by those names")
    if r.leaf is not None:
        why = file_problem(r.leaf)
        if why:
            return f" {why}"
    for side in SIDE_FILES:
        try:
            why = file_problem(os.stat(r.rest[0] + side, dir_fd=r.fd, follow_symlinks=False))
        except FileNotFoundError:
            continue
        if why:
            return f": its {r.rest[0]}{side} {why}"
    return None


def check_store(url: str | None, create: bool = False) -> Path | None:
    """The store's file (its real path) once root may open it (see the module); None for a
    store with no file. `create` (commands that write): directories missing above it are
    made here (never group- or world-writable, whatever the umask) and checked as any.
    VirtbenchError (one line) otherwise."""
    given = store_file(url)
    if given is None:
        return None
    named = f"store {given}"
    try:
        with walk(given) as r:
            why = store_problem(r)
            if why:
                raise VirtbenchError(f"{named}{why}; {STORE_FIX}")
            if len(r.rest) == 1 or not create:
                return r.path
            _make_dirs(r, named)
        with walk(given) as r:             # what was made, checked as anything else
            why = store_problem(r)
            if why:
                raise VirtbenchError(f"{named}{why}; {STORE_FIX}")
            return r.path
    except PathRefused as exc:
        raise VirtbenchError(f"{said(named, given, exc)}; {STORE_FIX}") from None
    except OSError as exc:
        raise VirtbenchError(f"{named}: cannot reach it ({exc.strerror}); give a path you "
                             "can reach") from None


def said(named: str, given, refused: PathRefused) -> str:
    """`named` and the walk's clause, without naming the path twice when the clause is
    about the path itself (pure but for the current directory)."""
    clause = str(refused)
    whole = os.path.join(os.getcwd(), os.fspath(given)) + " "
    if clause.startswith(whole):
        return f"{named} {clause[len(whole):]}"
    return f"{named}: {clause}"


def _make_dirs(r: Reached, named: str) -> None:
    """The directories in r.rest (all but the last name), made one in another (0755, less
    what the umask takes)."""
    fd = os.dup(r.fd)
    try:
        for name in r.rest[:-1]:
            try:
                os.mkdir(name, 0o755, dir_fd=fd)
            except FileExistsError:
                pass                                       # the second walk checks it
            except OSError as exc:
                raise VirtbenchError(f"{named}: cannot make its directory {name} "
                                     f"({exc.strerror}); give a path you can write") from None
            new = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                          dir_fd=fd)
            os.close(fd)
            fd = new
    finally:
        os.close(fd)


def store_ids(url: str | None) -> set[tuple[int, int]]:
    """(device, inode) of the store's file and of the files beside it that exist: what no
    `-o` may name, however spelled."""
    path = store_file(url)
    ids = set()
    for p in ([] if path is None else [str(path) + s for s in ("", *SIDE_FILES)]):
        with contextlib.suppress(OSError):
            st = os.stat(p)
            ids.add((st.st_dev, st.st_ino))
    return ids


def output_problem(r: Reached, keep: set[tuple[int, int]]) -> str | None:
    """Why `-o` may not write where the walk `r` reached, as a clause after `-o PATH`,
    or None. Reads the first bytes of a file already there."""
    if len(r.rest) > 1:
        return f": cannot write it (its directory {r.where / r.rest[0]} does not exist); " \
               "give a file in a directory that exists"
    if r.leaf is None:
        return None
    why = file_problem(r.leaf)
    if why:
        return f" {why}; {OUTPUT_FIX} (virtbench replaces only a regular file of root's " \
               "or yours that no one else can write)"
    if (r.leaf.st_dev, r.leaf.st_ino) in keep:
        return " is the store this command uses (or one of its files); " \
               f"{OUTPUT_FIX}: a report never replaces the store"
    why = content_problem(_head(r))
    if why:
        return f" {why}; {OUTPUT_FIX}: a report never replaces a database"
    return None


def _head(r: Reached) -> bytes:
    """The first 16 bytes of the leaf, once it is still the file lstat() saw."""
    fd = os.open(r.rest[0], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                 dir_fd=r.fd)
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (r.leaf.st_dev, r.leaf.st_ino):
            raise PathRefused(f"{r.path} changed while it was checked")
        return os.read(fd, len(SQLITE_HEADER))
    finally:
        os.close(fd)


def check_output(path: str | os.PathLike, store_url: str | None = None) -> None:
    """Refuse an `-o` target before anything is read or run (nothing is written)."""
    _output(path, store_url, None)


def write_output(path: str | os.PathLike, data: str | bytes | Iterable[str | bytes],
                 store_url: str | None = None) -> bool:
    """`data` written to the `-o` file `path` (checked again here, then replaced atomically);
    True when it replaced a file that was there."""
    return _output(path, store_url, data)


def _output(path, store_url, data) -> bool:
    named = f"-o {path}"
    try:
        with walk(path) as r:
            why = output_problem(r, store_ids(store_url))
            if why:
                raise VirtbenchError(f"{named}{why}")
            if data is not None:
                write_atomic(r.fd, r.rest[0], data,
                             None if r.leaf is None else stat.S_IMODE(r.leaf.st_mode) & 0o777)
            return r.leaf is not None
    except PathRefused as exc:
        fix = ("give a file in a directory only root (or you) can write, or the file the "
               "link names") if exc.link else "give the path of a file"
        raise VirtbenchError(f"{said(named, path, exc)}; {fix}") from None
    except OSError as exc:
        raise VirtbenchError(f"{named}: cannot write it ({exc.strerror}); give a file in a "
                             "directory that exists and you can write") from None


def write_atomic(dir_fd: int, name: str, data: str | bytes | Iterable[str | bytes],
                 mode: int | None = None) -> None:
    """`data` into a new file of an unpredictable name in the directory `dir_fd` (O_EXCL,
    never through a link), renamed over `name` once whole; on any failure the new file is
    removed and whatever was at `name` is left as it was. `mode`: the file's (the one it
    replaces keeps its own), else what the umask leaves of 0666."""
    tmp = f".{name[:64]}.{secrets.token_hex(8)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o666 if mode is None else 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in [data] if isinstance(data, (str, bytes)) else data:
                f.write(chunk.encode() if isinstance(chunk, str) else chunk)
            f.flush()
            if mode is not None:
                os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
