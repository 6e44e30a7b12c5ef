"""The steps the guest image's and the host image's caches share: a build made in a
temporary directory beside its final place and renamed into it, so an interrupted build never
leaves a half image that looks finished; and the pruning of every directory the current
recipes do not keep."""
from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

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
