"""`virtbench export RUN_ID --artifact PATH`, `virtbench import PATH` and `virtbench run
--replay PATH` (docs/papers.md, "The artifact"): a run as a paper's artifact, loaded into a
store, and its study run again here, compared with it.

Bad input is one line, exit 2, nothing written: --artifact PATH is checked before the store
is opened (results/report/artifact/archive.py: a new name, or an empty directory of
root's); an artifact to import or replay is read and checked whole (every SHA-256, the
files exactly those SHA256SUMS names, its format and report schema) before a store is
opened, so a tampered one creates nothing; its run is written in one transaction."""
from __future__ import annotations

from dataclasses import fields

from rich.markup import escape

from ...core.errors import VirtbenchError
from ...core.text import store_flag

EXIT_OK = 0


def add_parsers(sub) -> None:
    """`virtbench export` and `virtbench import`."""
    e = sub.add_parser("export", help="a run as a paper's artifact: its study, raw samples, "
                                      "fingerprints, report in every format, figures, a "
                                      "README and checksums")
    e.add_argument("run_id", metavar="RUN_ID", help="the run (a unique prefix will do)")
    e.add_argument("--artifact", required=True, metavar="PATH",
                   help="a new directory, or a .tar.gz when PATH ends so (never replaced)")
    e.add_argument("--store", type=store_flag, metavar="URL")
    i = sub.add_parser("import", help="load an artifact (`virtbench export`) into the "
                                      "store: its run keeps its id")
    i.add_argument("path", metavar="PATH", help="the artifact: a directory or a .tar.gz")
    i.add_argument("--store", type=store_flag, metavar="URL",
                   help="the store to load it into (made when missing, as `run` makes it)")


def add_replay_flag(run) -> None:
    """`run --replay PATH`."""
    run.add_argument("--replay", metavar="PATH",
                     help="run an artifact's study again here (as its run stored it) and "
                          "compare the new run with the artifact's run")


def cmd_export(args, out, open_store) -> int:
    from ...results import analysis
    from ...results.report.artifact import archive, build
    from ...foundations.store.transfer import run_rows
    archive.check_target(args.artifact)                  # before the store is read
    store = open_store(args, read_only=True)
    dump = run_rows(store, args.run_id)
    result = analysis.analyze_run(store, dump["run"])
    files = build.artifact_files(dump, result, args.artifact)
    archive.write_artifact(args.artifact, files)
    figures = sum(1 for n in files if n.startswith("figures/"))
    out.print(f"wrote {args.artifact}: run {dump['run']}, {len(files)} files "
              f"({len(dump['samples'])} samples, {figures} figure files); check it with "
              f"`sha256sum -c SHA256SUMS`", highlight=False, markup=False, soft_wrap=True)
    return EXIT_OK


def cmd_import(args, out, open_store) -> int:
    from ...results.report.artifact import archive, build, load
    files = archive.read_artifact(args.path)
    _, dump = build.opened(files, args.path)                        # before a store is made
    store = open_store(args)
    run_id = load.import_dump(store, dump, files, args.path)
    out.print(f"imported run {run_id} ({dump['runs'][0]['study_name']}: "
              f"{len(dump['trials'])} trials, {len(dump['samples'])} samples) into "
              f"{store.shown}; `virtbench report {run_id}` reads it", highlight=False,
              markup=False, soft_wrap=True)
    return EXIT_OK


def _given_flags(args) -> list[str]:
    from ...study.flagset import StudyFlags, flag_of
    given = [flag_of(f.name) for f in fields(StudyFlags) if getattr(args, f.name) not in
             (None, False)]
    return given + (["--retry-failed"] if args.retry_failed else [])


def cmd_replay(args, out, err, open_store, finished, print_plan, thresholds) -> int:
    """The artifact's study run again as a new run; its report, then the comparison with
    the artifact's run and what differs in the stack. `finished(store, outcome)` prints a
    run's report and gives its exit status; `print_plan(prepared)` a dry run's plan;
    `thresholds`: compare's (alpha, smallest change in %)."""
    from ...results.report.artifact import replay
    from ...execution.run.runner import Runner, prepare
    from ...machinery.host.writes import check_store
    replay.refuse_flags(args.study, args.resume, _given_flags(args))
    if not args.dry_run:
        check_store(args.store)
    source = replay.open_replay(args.replay)
    prepared = prepare(source.study, dry_run=args.dry_run)
    if args.dry_run:
        return print_plan(prepared)
    if prepared.runnable == 0:
        for env in prepared.envs.values():
            env.stop()
        raise VirtbenchError(f"run --replay {args.replay}: no environment of its study can "
                             "run any of its benchmarks here (`virtbench run --replay "
                             f"{args.replay} --dry-run` says why); nothing was stored")
    store = open_store(args)
    if replay.ensure_imported(store, source):
        err.print(f"imported run {source.run_id} from {args.replay}", highlight=False,
                  markup=False)
    outcome = Runner(store, console=err, show_progress=not args.no_progress,
                     series=args.series).start(prepared, detail=source.detail())
    code = finished(store, outcome)
    if outcome.status != "interrupted":
        print_replay(store, source, outcome.run_id, out, thresholds)
    return code


def print_replay(store, source, run_id: str, out, thresholds: tuple[float, float]) -> None:
    """The comparison of the artifact's run (A) with its replay (B), as `compare A B`
    prints it (at compare's `thresholds`: alpha, smallest change in %), then what differs
    in the stack."""
    from ...results import analysis
    from ...results.report.fmt.compare import difference_lines
    from ...results.report.formats.table import print_compare
    from rich.console import Console
    from ...results.report.view import width_for
    out = Console(width=width_for(out.is_terminal, True))   # compare's columns, as `compare`
    comparison = analysis.compare_runs(analysis.analyze_run(store, source.run_id),
                                       analysis.analyze_run(store, run_id),
                                       alpha=thresholds[0], min_change_pct=thresholds[1])
    out.print(f"\nreplay: run {run_id} replays run {source.run_id} ({source.path}); "
              f"compared as `virtbench compare {source.run_id} {run_id}`", highlight=False,
              markup=False, soft_wrap=True)
    print_compare(comparison, out)
    lines = difference_lines(comparison)
    out.print(f"what differs in the stack (run {source.run_id} → run {run_id}): "
              + (f"{len(lines)} difference(s)" if lines else "nothing"), highlight=False,
              markup=False, soft_wrap=True)
    for line in lines:
        out.print(f"  {escape(line)}", highlight=False)
