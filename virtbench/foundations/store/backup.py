"""A SQLite store's backup, taken by `virtbench store upgrade` before it changes the store.

The backup is a new file beside the store, `S.db.bak-<revision>-<UTC time>` (`none` for a
store made before revisions), created exclusively (never over an existing file, never
through a symlink) with mode 0600, holding the store as it was: SQLite's online backup API,
one consistent copy with the committed pages of the -wal file included. A backup that cannot
be made is one line and the store is left as it is; a partial one is removed."""
from __future__ import annotations

import os
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

from ...core.errors import VirtbenchError

BACKUP_MODE = 0o600
_TRIES = 100        # names taken in the same second: .1, .2, ...


def backup_name(store: Path, revision: str | None, when: datetime, n: int = 0) -> Path:
    """Pure: the n-th candidate name of a backup of `store` at `revision` made `when`."""
    stamp = when.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return store.with_name(f"{store.name}.bak-{revision or 'none'}-{stamp}"
                           + (f".{n}" if n else ""))


def sqlite_backup(store: Path, revision: str | None, shown: str) -> Path:
    """Copy the SQLite store `store` into a new backup beside it; returns the backup's path.
    The caller holds the store's write lock, so the copy is the store as it is upgraded."""
    target, fd = _create(store, revision, shown)
    made = os.fstat(fd)
    try:
        source = sqlite3.connect(f"file:{quote(str(store), safe='/')}?mode=ro", uri=True)
        try:
            copy = sqlite3.connect(target)
            try:
                source.backup(copy)
            finally:
                copy.close()
        finally:
            source.close()
        now = os.stat(target, follow_symlinks=False)
        if (now.st_dev, now.st_ino) != (made.st_dev, made.st_ino):
            raise OSError(0, "replaced by another file while it was written")
        os.fsync(fd)
    except (sqlite3.Error, OSError) as exc:
        _remove(target, made)
        why = getattr(exc, "strerror", None) or str(exc).strip().splitlines()[0]
        raise VirtbenchError(f"store {shown}: cannot back it up to {target} ({why}); nothing "
                             "was upgraded; free space or fix the directory, then run "
                             "`virtbench store upgrade` again") from None
    finally:
        os.close(fd)
    return target


def _create(store: Path, revision: str | None, shown: str) -> tuple[Path, int]:
    """A new, empty backup file (its path and an open descriptor), made exclusively."""
    when = datetime.now(timezone.utc)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for n in range(_TRIES):
        target = backup_name(store, revision, when, n)
        try:
            return target, os.open(target, flags, BACKUP_MODE)
        except FileExistsError:
            continue
        except OSError as exc:
            raise VirtbenchError(f"store {shown}: cannot make its backup {target} "
                                 f"({exc.strerror}); nothing was upgraded") from None
    raise VirtbenchError(f"store {shown}: {_TRIES} backups of this second exist already "
                         f"beside it ({backup_name(store, revision, when)}); nothing was "
                         "upgraded")


def _remove(target: Path, made: os.stat_result) -> None:
    """Remove the partial backup (and its journal) if it is still the file made here."""
    try:
        now = os.stat(target, follow_symlinks=False)
        if (now.st_dev, now.st_ino) == (made.st_dev, made.st_ino):
            os.unlink(target)
    except OSError:
        pass
    try:
        os.unlink(f"{target}-journal")
    except OSError:
        pass
