"""`virtbench figures` (docs/papers.md): a stored run's figures for a paper, one file per
figure and format in -o DIR. The figures are results/report/figures/paper.py's and the
study's own (figures/declared.py, [[figure]]), their bytes save.py's; matplotlib (the `paper` extra) is imported only when the command runs.

-o DIR is checked before the store is opened (as every path virtbench writes as root:
machinery/host/writes.py): a directory that exists must be one of root's (or yours) that no
one else can write, reached by no link others could swap; a new one is made (0755) only once
every figure is drawn; each file is then written by write_output (checked again, replaced
atomically, never over the store or a database)."""
from __future__ import annotations

import os
from pathlib import Path

from ...core.errors import VirtbenchError
from ...core.text import store_flag

DIR_FIX = "give a directory of root's (or yours) that no one else can write, or a new name"


def add_parser(sub) -> None:
    f = sub.add_parser("figures", help="a run's figures for a paper (PDF, SVG, PNG): ratios "
                                       "with the threshold band, values, samples, a tune's "
                                       "effects, the study's own ([[figure]])")
    f.add_argument("run_id", nargs="?", metavar="RUN_ID", help="the run (default: the latest)")
    f.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="the directory to write into (made when missing)")
    f.add_argument("--format", default="pdf", metavar="FMT[,FMT...]",
                   help="pdf, svg, png, comma-separated (default %(default)s)")
    f.add_argument("--width", choices=("single", "double"), default="single",
                   help="one column (3.5 in, the default) or two (7.16 in)")
    f.add_argument("--history", action="store_true",
                   help="also the run's history: each series it is a point of (its host's "
                        "and its series' complete runs), up to it, with the changes found")
    f.add_argument("--store", type=store_flag, metavar="URL")


def check_dir(path: str) -> bool:
    """Refuse -o DIR as one line before anything is read or written; True when it exists
    (False: its parent exists and it will be made)."""
    from ...machinery.host.pathwalk import PathRefused, walk
    from ...machinery.host.trusted import file_problem
    from ...machinery.host.writes import said
    named = f"-o {path}"
    try:
        with walk(path) as r:
            if len(r.rest) > 1:
                raise VirtbenchError(f"{named}: its parent {r.where / r.rest[0]} does not "
                                     "exist; give a directory whose parent exists")
            why = None if r.leaf is None else file_problem(r.leaf, directory=True)
    except PathRefused as exc:
        raise VirtbenchError(f"{said(named, path, exc)}; {DIR_FIX}") from None
    except OSError as exc:
        raise VirtbenchError(f"{named}: cannot read it ({exc.strerror}); {DIR_FIX}") from None
    if why:
        raise VirtbenchError(f"{named} {why}; {DIR_FIX}")
    return r.leaf is not None


def _make_dir(path: str) -> None:
    """-o DIR made (0755 less the umask), checked as it is made: its parent walked again."""
    from ...machinery.host.pathwalk import walk
    with walk(path) as r:
        if r.leaf is None and len(r.rest) == 1:
            os.mkdir(r.rest[0], 0o755, dir_fd=r.fd)
    check_dir(path)


def _libraries():
    """paper.py and save.py, or one line when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise VirtbenchError("figures needs matplotlib; install virtbench's paper extra "
                             "(pip install 'virtbench[paper]')") from None
    from ...results.report.figures import paper, save
    return paper, save


def _history_figures(store, run_id: str, width: str) -> list:
    """The run's history series up to it (figures/historyfig.py); one line when it has no
    earlier complete run of its host and series to line up with."""
    from ...results.history import HistoryRequest, history
    from ...results.report.figures import historyfig
    run = store.get_run(run_id)
    where = f"host {run['host']}" + (f", series {run['series']}" if run["series"] else "")
    if run["status"] != "complete":
        raise VirtbenchError(f"figures {run_id} --history: the run is {run['status']}, and "
                             "history lines up complete runs; give a complete run")
    figs = historyfig.history_figures(
        history(store, HistoryRequest(series=run["series"], host=run["host"])), run_id, width)
    if not figs:
        raise VirtbenchError(f"figures {run_id} --history: no complete run of {where} "
                             "before it to line it up with; drop --history or run the "
                             "study again")
    return figs


def cmd_figures(args, out, open_store) -> int:
    """Draw the run's figures, render every file, then write them into -o DIR; bad input is
    one line (exit 2) before anything is written."""
    from ...machinery.host.writes import check_output, write_output
    paper, save = _libraries()
    fmts = save.formats(args.format)
    existed = check_dir(args.output)
    store = open_store(args, read_only=True)
    from ...results import analysis
    report = analysis.analyze_run(store, args.run_id)
    figs = paper.paper_figures(report, args.width)
    if getattr(args, "history", False):
        figs += _history_figures(store, report.run.id, args.width)
    if not figs:
        raise VirtbenchError(f"figures {report.run.id}: the run has no results to draw; give "
                             "a run with at least one successful trial")
    files = save.rendered(figs, fmts, report)
    for name, _ in files if existed else []:        # a file there it may not replace
        check_output(Path(args.output) / name, args.store)
    _make_dir(args.output)
    for name, data in files:
        write_output(Path(args.output) / name, data, args.store)
    out.print(f"wrote {len(files)} files ({len(figs)} figures × {', '.join(fmts)}) into "
              f"{args.output}", highlight=False, markup=False, soft_wrap=True)
    return 0
