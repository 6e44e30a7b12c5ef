"""`virtbench history --format html -o DIR`: the history's pages as static files, the same
renderer as `virtbench serve`'s (report/formats/history_html.py), linked to each other by
file name, plotly.js once beside them (nothing fetched when they are opened).

DIR is virtbench's: a new directory, or one an earlier `history --format html` made (it
holds MARK), whose pages are then replaced whole. Anything else is refused before the
history is read, one line naming DIR and the fix: an existing directory that is not empty
and was not made so, a symbolic link, a file, a directory another user owns or others can
write, a parent others can rename it out of, a symbolic link on the way in a directory
others can write (host/pathwalk.py). The pages are written into a private directory
beside DIR and renamed into place at the end, so an interrupted write leaves nothing."""
from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from ...core.errors import VirtbenchError
from ...machinery.host.pathwalk import PathRefused, walk
from ...machinery.host.trusted import file_problem
from ...machinery.host.workroot import parent_problem, trust_problem
from ...foundations.model.history import HistoryReport
from ...results.report.formats import history_html
from ...results.report.formats.html import plotly_js

MARK = ".virtbench-history"
PLOTLY = "plotly.min.js"
INDEX = "index.html"


def series_file(sid: str) -> str:
    return f"series-{sid}.html"


def links() -> history_html.Links:
    return history_html.Links(index=INDEX, series=series_file, plotly_src=PLOTLY,
                              nav=[("every series", INDEX)])


def pages(report: HistoryReport) -> dict[str, str]:
    """File name -> page: the index, then one page per series."""
    made = links()
    out = {INDEX: history_html.index_page(report, made)}
    for s in report.series:
        out[series_file(history_html.series_id(s))] = history_html.series_page(report, s,
                                                                               made)
    return out


def check_target(directory: str | Path) -> Path:
    """DIR as an absolute path, once it is one virtbench may write (see the module); one
    line (VirtbenchError) otherwise. Nothing is written."""
    named = f"-o {directory}"
    fix = "give a new directory (virtbench makes it)"
    try:
        with walk(directory, follow_leaf=False) as reached:    # no link others planted
            out = reached.path
    except PathRefused as exc:
        raise VirtbenchError(f"{named}: {exc}; {fix} in a directory only you (or root) can "
                             "write") from None
    except OSError as exc:
        raise VirtbenchError(f"{named}: cannot reach it ({exc.strerror}); {fix} in a "
                             "directory you can write") from None
    try:
        pst = os.stat(out.parent)
    except OSError:
        raise VirtbenchError(f"{named}: its parent {out.parent} does not exist; {fix} in a "
                             "directory that exists") from None
    why = parent_problem(pst)
    if why:
        raise VirtbenchError(f"{named}: its parent {out.parent} {why}; {fix} in a directory "
                             "only you (or root) can write")
    try:
        st = os.lstat(out)
    except FileNotFoundError:
        return out
    why = trust_problem(st)
    if why:
        raise VirtbenchError(f"{named} {why}; {fix}")
    entries = os.listdir(out)
    if entries and MARK not in entries:
        raise VirtbenchError(f"{named} is not empty and virtbench did not make it; {fix}, "
                             "or an empty one")
    if MARK in entries:
        why = file_problem(os.lstat(out / MARK))
        if why:
            raise VirtbenchError(f"{named}: its {MARK} {why}; {fix}")
    return out


def write(report: HistoryReport, directory: str | Path) -> tuple[Path, int]:
    """The pages written into DIR (checked again); (DIR, the number of pages)."""
    out = check_target(directory)
    made = pages(report)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    old = None
    try:
        for name, text in made.items():
            (work / name).write_text(text)
        (work / PLOTLY).write_text(plotly_js())
        (work / MARK).write_text("made by virtbench history --format html; its pages are "
                                 "replaced whole by the next one\n")
        os.chmod(work, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH
                 | stat.S_IXOTH)
        if os.path.lexists(out):
            out = check_target(directory)         # still ours, just before replacing it
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
            os.rename(out, old / "pages")
        os.rename(work, out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        if old is not None and (old / "pages").exists() and not os.path.lexists(out):
            os.rename(old / "pages", out)           # put the earlier pages back
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    return out, len(made)
