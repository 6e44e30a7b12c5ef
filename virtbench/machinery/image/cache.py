"""The steps the guest image's and the host image's caches share: a build made in a
temporary directory beside its final place and renamed into it, so an interrupted build never
leaves a half image that looks finished; the pruning of every directory the current
recipes do not keep; a recipe's digest (its cache key), the builders' commands and the trim of
a built tree."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from ...core.errors import VirtbenchError

TMP_MARK = ".tmp-"          # in the name of a build still under way: never pruned


@contextmanager
def building(out: Path) -> Iterator[Path]:
    """A fresh directory beside `out` to build in. When the block ends without an error it
    becomes `out` (swap_in); it is gone afterwards whatever happened."""
    tmp = Path(tempfile.mkdtemp(prefix=f"{out.name}{TMP_MARK}", dir=out.parent))
    try:
        yield tmp
        swap_in(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def swap_in(built: Path, out: Path) -> None:
    """Rename `built` to `out`. An image already there (a forced rebuild) is renamed aside
    first and then removed: a running guest keeps the files it has open."""
    if out.exists():
        old = out.with_name(out.name + f".old-{os.getpid()}")
        out.rename(old)
        shutil.rmtree(old, ignore_errors=True)
    built.rename(out)


def prune(where: Path, keep: set[str]) -> list[Path]:
    """Remove each directory in `where` not named in `keep` (nor a build under way);
    return them."""
    removed = []
    if where.is_dir():
        for d in where.iterdir():
            if d.is_dir() and d.name not in keep and TMP_MARK not in d.name:
                shutil.rmtree(d, ignore_errors=True)
                removed.append(d)
    return removed


def digest(obj) -> str:
    """A recipe's cache key: the first 16 hex digits of the SHA-256 of its canonical JSON."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


def run(argv, say=None, what: str = "", **kw) -> subprocess.CompletedProcess:
    """A builder's command (sbin on PATH, C locale, apt non-interactive); its failure is one
    line: what failed and the last line it printed."""
    env = dict(os.environ, PATH="/usr/sbin:/usr/bin:/sbin:/bin:" + os.environ.get("PATH", ""),
               LC_ALL="C", DEBIAN_FRONTEND="noninteractive")
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, **kw)
    if proc.returncode != 0:
        lines = (proc.stderr.strip() or proc.stdout.strip() or "(no output)").splitlines()
        raise VirtbenchError(f"{what or argv[0]} failed: {lines[-1]}")
    return proc


def trim(root: Path, rels: Iterable[str]) -> None:
    """Empty (a directory) or remove (a file) each path of a built tree the image never needs,
    and the stock initramfs (virtbench's own replaces it)."""
    for rel in rels:
        p = root / rel
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
            p.mkdir()
        elif p.exists() or p.is_symlink():
            p.unlink()
    for p in (root / "boot").glob("initrd.img*"):
        p.unlink()
