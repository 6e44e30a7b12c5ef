"""The `virtbench` command: envs, benchmarks, image, run, runs, report, compare, history,
serve, density, tune, figures, export, import, worker, fleet, store."""
from __future__ import annotations

import os
import sys

from rich.console import Console
from rich.markup import escape
from rich.table import Table

# Only what building the parser needs is imported here; each command imports what it uses
# when it runs, so `virtbench --version`, `--help` and `runs` start without the analysis
# (scipy), the environments or the runner.
from . import artifact, density, figures, qemu, storecmd, tune
from ...results import report
from ...results.report.view import View, width_for
from .parser import (COMPARE_ALPHA, COMPARE_MIN_CHANGE_PCT, EXIT_FAILED_TRIALS,
                     EXIT_INTERRUPTED, EXIT_OK, build_parser)
from ...core.errors import VirtbenchError
from ...execution.fleet import commands as fleet_commands
from ...machinery.host.writes import check_output, check_store, write_output


def cmd_envs(args, out: Console) -> int:
    from ...measure import environments
    from ...measure.environments import probes
    err = Console(stderr=True)
    found = probes.answers(environments.KINDS, fresh=args.probe,
                           progress=lambda line: err.print(f"envs: {line}", highlight=False))
    when = f"{found.probed.astimezone():%Y-%m-%d %H:%M}"
    table = Table(title="environment kinds", caption=(
        f"probed {when} (cached; `virtbench envs --probe` probes again)" if found.cached
        else f"probed now, {when}"))
    for col in ("kind", "usable", "why / details", "options"):
        table.add_column(col)
    for kind, cls in sorted(environments.KINDS.items()):
        u = found.kinds[kind]
        details = u.reason or "; ".join(f"{k}: {v}" for k, v in u.details.items()) or cls.summary
        opts = cls.options_text()
        table.add_row(kind, "[green]yes[/]" if u.usable else "[red]no[/]", details, opts or "—")
    out.print(table)
    return EXIT_OK


def cmd_benchmarks(args, out: Console) -> int:
    from ...measure import benchmarks
    table = Table(title="benchmarks")
    for col in ("name", "family", "metrics (unit, ↑ higher / ↓ lower is better)", "tools",
                "defaults", "description"):
        table.add_column(col)
    for name, b in sorted(benchmarks.REGISTRY.items(), key=lambda kv: (kv[1].family, kv[0])):
        metrics = ", ".join(f"{m.name} ({m.unit} {'↑' if m.higher_is_better else '↓'})"
                            for m in b.metrics)
        defaults = ", ".join(f"{k}={v}" for k, v in b.defaults.items())
        table.add_row(name, b.family, metrics, ", ".join(b.tools), defaults, b.description)
    out.print(table)
    return EXIT_OK


def cmd_image(args, out: Console) -> int:
    from ...machinery.image import host_image, guest_image as image   # guests are optional for every other command
    if args.image_command == "prune":
        removed = image.prune() + host_image.prune()
        out.print(f"removed {len(removed)} cached image(s)" +
                  "".join(f"\n  {p}" for p in removed), highlight=False)
        return EXIT_OK
    err = Console(stderr=True)
    linux = getattr(args, "linux", None)
    if linux and args.variant == "host":
        raise VirtbenchError("image build: --linux is for the guest image; drop --variant host "
                             "or --linux")
    say = lambda msg: err.print(f"image: {msg}", highlight=False)   # noqa: E731
    info = (host_image.build(force=args.force, progress=say) if args.variant == "host"
            else image.build(force=args.force, progress=say, linux=linux))
    how = (f"reused the cached image ({info.build_s:.2f} s)" if info.reused
           else f"built in {info.build_s:.1f} s")
    out.print(f"path {info.path}\nsize {info.size_bytes / 2**20:.0f} MiB\n"
              f"recipe {info.recipe_hash}\nlinux {info.linux_version}"
              + (f" ({info.linux_suite})" if info.linux_suite else "") + f"\n{how}",
              highlight=False)
    return EXIT_OK


def cmd_run(args, out: Console, err: Console) -> int:
    if args.replay:
        return artifact.cmd_replay(args, out, err, _open_store,
                                   lambda store, outcome: _finished(args, out, err, store,
                                                                    outcome),
                                   lambda prepared: _print_plan(prepared, out),
                                   (COMPARE_ALPHA, COMPARE_MIN_CHANGE_PCT))
    if not args.dry_run:
        check_store(args.store)     # refused before anything is loaded, probed, built or run
    from ...study import design as study_mod, flags as study_flags
    from ...execution.run.runner import Runner, prepare, skip_line
    if args.retry_failed and not args.resume:
        raise VirtbenchError("--retry-failed needs --resume RUN_ID (the run whose failed "
                             "trials to run again)")
    if args.resume and args.series:
        raise VirtbenchError("--series tags a new run; a resumed run keeps the series it "
                             "started with (drop --series)")
    if args.resume and args.dry_run:
        raise VirtbenchError("--dry-run prints a new run's plan and touches no store; a "
                             "resumed run runs what its stored plan is missing (see it with "
                             f"`virtbench report {args.resume}`): drop --dry-run or --resume")
    if args.resume:
        store = _open_store(args, create=False)   # none there: one line, nothing created
        args.resume = store.resolve_run_id(args.resume)      # a unique prefix will do
        outcome = Runner(store, console=err, show_progress=not args.no_progress).resume(
            args.resume, retry_failed=args.retry_failed)
    else:
        study = study_mod.load(args.study) if args.study else None
        study = study_flags.with_flags(study, study_flags.StudyFlags.from_args(args))
        # bad input stops here, before the store is touched; a dry run probes and builds nothing
        prepared = prepare(study, dry_run=args.dry_run)
        if args.dry_run:
            return _print_plan(prepared, out)
        if prepared.runnable == 0:      # every case skipped: say why, store nothing
            for env in prepared.envs.values():
                env.stop()              # resolve() may have connected (ssh, libvirt)
            for env, case, why in prepared.skipped_cases:
                err.print(f"[yellow]skipping[/] {escape(skip_line(env, case, why))}",
                          highlight=False)
            err.print("nothing to run: no environment of this study can run any of its "
                      "benchmarks (see above); no run was stored", highlight=False)
            return EXIT_OK
        store = _open_store(args)
        outcome = Runner(store, console=err, show_progress=not args.no_progress,
                         series=args.series).start(prepared)
    return _finished(args, out, err, store, outcome)


def _finished(args, out: Console, err: Console, store, outcome) -> int:
    """A run's end (run, tune): its report, what failed, its exit status."""
    from ...results import analysis
    if outcome.status == "interrupted":
        return EXIT_INTERRUPTED
    from ...results.report.formats.table import print_report
    print_report(analysis.analyze_run(store, outcome.run_id), out, _view(args))
    if outcome.failed_profiles:
        err.print(f"[yellow]{outcome.failed_profiles} exit profile(s) could not be taken[/]; "
                  f"why is in `virtbench report {outcome.run_id} --profile`")
    if outcome.failed:
        err.print(f"[yellow]{outcome.failed} trial(s) failed[/]; their errors, exit statuses, "
                  "output tails and what they measured before failing are in the store "
                  f"(virtbench report {outcome.run_id} --format json: failed_trial_evidence)")
        return EXIT_FAILED_TRIALS
    return EXIT_OK


def _print_plan(prepared, out: Console) -> int:
    """--dry-run: the plan, printed literally (labels like `pi[k=17]` are not markup)."""
    from ...execution.run import warmup
    from ...study.reach import reach_note
    from ...execution.run.runner import estimate_s, skip_line
    s = prepared.study

    def say(text: str) -> None:
        out.print(escape(text), highlight=False)

    total = warmup.planned_trials(s, len(prepared.envs), len(prepared.cases),
                                  len(prepared.skipped_cases))
    n_skip = len(prepared.skipped_cases)
    if s.adaptive:
        say(f"trials auto: {s.min_trials} blocks first, then blocks for the undecided cases "
            f"until decided, {s.max_trials} usable blocks per case"
            + (f" or {s.budget_s / 60:g} min in all" if s.budget_s else "")
            + (f"; a pass runs on until a change of {s.resolution_pct:g} % is ruled out"
               if s.resolution_pct else ""))
    say(f"study {s.name}: ({s.trials} trials + {s.warmup} warm-up) x {len(prepared.envs)} "
        f"environment(s) x {len(prepared.cases)} benchmark(s)"
        + (f" - {n_skip} skipped case(s)" if n_skip else "") + f" = {total} trials"
        + (" (quick sizes)" if s.quick else ""))
    say(f"baseline: {prepared.baseline or '(none)'}; order: randomised blocks, seed "
        f"{s.seed if s.seed is not None else '(random at start)'}; pin {s.pin}; alpha {s.alpha:g}")
    note = reach_note(prepared)
    if note:
        say(f"note: {note}")
    for label, env in prepared.envs.items():
        say(f"  environment {label}  ({env.spec})")
    for spec, why in prepared.skipped:
        say(f"  skipped environment {spec}: {why}")
    if s.profile == "exits":
        say("  then exit profiles: one extra profiled trial per environment x benchmark, "
            "not a measured one")
        for label, env in prepared.envs.items():
            answer = env.capabilities().exit_profile
            say(f"    {label}: " + (answer.how if answer else f"none ({answer.reason})"))
    notes = s.method_notes()
    for label, (bench, params) in prepared.cases.items():
        say(f"  benchmark {label}: " + ", ".join(f"{k}={v}" for k, v in params.items()))
        if label in notes:
            say(f"    method note: {notes[label]}")
    for env, case, why in prepared.skipped_cases:
        say(f"  skipped {skip_line(env, case, why)}")
    minutes = estimate_s(prepared) / 60          # warm-ups included
    say(f"estimated time: about {minutes:.0f} min on bare metal (guests under TCG are much "
        "slower); dry run: nothing was built, probed or started")
    return EXIT_OK


def cmd_runs(args, out: Console) -> int:
    """The latest runs; a `running` run whose process is gone from this host (killed,
    crashed, rebooted) is shown `interrupted`, with the command that resumes it."""
    from ...machinery.host import runproc
    from ...foundations.store import sweeps as sweep
    store = _open_store(args, read_only=True)
    now = runproc.here()
    table = Table(title=f"runs in {store.shown}")
    for col in ("id", "study", "status", "quick", "started", "finished"):
        table.add_column(col)
    table.add_column("resume with", overflow="fold")     # a command: whole, never cut
    listed = store.list_runs()
    for r in listed:
        if r.get("damaged"):      # its own line below the table; the other runs stay readable
            table.add_row(r["id"], escape(r["study_name"] or ""), "damaged", "", "", "", "")
            continue
        status = runproc.shown_status(r, now)
        study, hint = sweep.listed_study(r), runproc.resume_hint(r["id"], status)
        table.add_row(r["id"], escape(study), status, "yes" if r["quick"] else "",
                      f"{r['started']:%Y-%m-%d %H:%M}",
                      f"{r['finished']:%H:%M}" if r["finished"] else "",
                      "" if sweep.is_sweep(r) else hint)
    out.print(table)
    for r in listed:
        if r.get("damaged"):
            out.print(r["damaged"], highlight=False, markup=False, soft_wrap=True)
    return EXIT_OK


def _open_store(args, read_only: bool = False, create: bool = True):
    """The store of --store (or $VIRTBENCH_STORE), opened once its file passed the check of
    every path virtbench writes as root (host/writes.py): the same for commands that only
    read, since SQLite makes its files beside the store even for a reader. `read_only`:
    never written (mode=ro); `create=False`: one that does not exist is one line and
    nothing is created (`run --resume`)."""
    from ...foundations.store import Store
    check_store(args.store, create=create and not read_only)
    return Store(args.store, read_only=read_only, create=create)


def _check_output(args) -> None:
    """-o FILE refused before anything is read or run (it is checked again when written)."""
    if getattr(args, "output", None):
        check_output(args.output, args.store)


def _emit(text: str, output: str | None, out: Console, store: str | None = None) -> None:
    """`text` to stdout, or with -o into FILE, replaced atomically; never over `store`'s
    file, nor any SQLite database (host/writes.py)."""
    if output:
        replaced = write_output(output, text, store)
        out.print(f"wrote {output}" + (" (replaced the file that was there)" if replaced
                                       else ""), highlight=False, markup=False,
                  soft_wrap=True)
    else:
        sys.stdout.write(text)


def cmd_report(args, out: Console) -> int:
    _check_output(args)
    store = _open_store(args, read_only=True)
    from ...results import analysis
    if args.fleet:
        if args.run_id:
            raise VirtbenchError("report: give RUN_ID or --fleet FLEET_ID, not both")
        from ...execution.fleet.side_by_side import analyze_fleet
        if args.baseline or args.correction:
            raise VirtbenchError("report --fleet: each host is against the first host's same "
                                 "environment with the study's correction; --baseline and "
                                 "--correction apply to one run (give RUN_ID)")
        result = analyze_fleet(store, args.fleet, threshold_pct=args.threshold,
                               analysis=args.analysis)
    else:
        result = analysis.analyze_run(store, args.run_id, threshold_pct=args.threshold,
                                      baseline=args.baseline, analysis=args.analysis,
                                      correction=args.correction)
    if args.profile:
        _emit(report.render_profiles(result, args.format), args.output, out, args.store)
        return EXIT_OK
    if getattr(args, "separate", False):
        from ...results.analysis.facts.separate import separating_study
        _emit(separating_study(result), args.output, out, args.store)
        return EXIT_OK
    if args.format == "table" and not args.output:
        from ...results.report.formats.table import print_report
        if getattr(result, "density", None) is not None:   # a sweep's steps: as `density`
            out = Console(width=width_for(out.is_terminal, True))    # lays them out
        print_report(result, out, _view(args))
    else:
        _emit(report.render(result, args.format, _view(args)), args.output, out, args.store)
    return EXIT_OK


def _view(args):
    """--wide, and the columns a report written to a file is laid out in."""
    wide = bool(getattr(args, "wide", False))
    return View(wide=wide, width=width_for(False, wide),
                verbosity=getattr(args, "verbosity", "normal"))


def cmd_compare(args, out: Console) -> int:
    _check_output(args)
    store = _open_store(args, read_only=True)
    from ...results import analysis
    if args.fleet:
        from ...execution.fleet.side_by_side import host_runs
        run_a, run_b = host_runs(store, args.fleet, args.run_a, args.run_b)
    elif not (args.run_a and args.run_b):
        raise VirtbenchError("compare: give RUN_A and RUN_B (or --fleet FLEET_ID [HOST_A HOST_B])")
    else:
        run_a, run_b = args.run_a, args.run_b
    a = analysis.analyze_run(store, run_a)
    b = analysis.analyze_run(store, run_b)
    if args.with_labels and not args.pair:
        raise VirtbenchError("--with LABEL_B needs --pair LABEL_A before it")
    pairs = analysis.resolve_pairs(args.pair or [], args.with_labels,
                                   analysis.names_of(a), analysis.names_of(b))
    comparison = analysis.compare_runs(a, b, alpha=args.alpha, min_change_pct=args.min_change,
                                       pairs=pairs or None)
    if args.format == "table" and not args.output:
        from ...results.report.formats.table import print_compare
        print_compare(comparison, out)
    else:
        _emit(report.render_compare(comparison, args.format), args.output, out, args.store)
    return EXIT_OK


EXIT_CHANGED = 3      # history --fail-on: a confirmed change (or regression) in the last runs


def cmd_history(args, out: Console, err: Console) -> int:
    """Runs lined up into series, their changes; with --fail-on, exit 3 on a confirmed
    change (or regression) in the last N runs. Read-only: never creates a store."""
    from ...results import history
    if args.last is not None and not args.fail_on:
        raise VirtbenchError("--last N needs --fail-on change|regression (the changes it "
                             "looks for in the last N runs)")
    from ...foundations.store import StoreUnavailable
    if args.format == "html":
        if not args.output:
            raise VirtbenchError("history --format html writes a directory of pages: give "
                                 "-o DIR (a new directory; virtbench makes it)")
        from ..web import static
        static.check_target(args.output)          # before the store is read
    else:
        _check_output(args)
    asked = history.HistoryRequest(series=args.series, host=args.host, environments=args.env,
                                   benchmarks=args.bench, metrics=args.metric,
                                   threshold_pct=args.threshold, alpha=args.alpha,
                                   correction=args.correction)
    store = _open_store(args, read_only=True)
    try:
        result = history.history(store, asked)
    except StoreUnavailable as exc:
        # history's exit 3 means a confirmed change; a store that stops answering while it
        # reads has nothing to resume: exit 2, so a pipeline never takes it for a regression
        raise VirtbenchError(str(exc)) from None
    for line in result.left_out:          # damaged runs: named, the others read
        err.print(f"history: left out {line}", highlight=False, markup=False)
    if args.format == "table" and not args.output:
        from ...results.report.formats.table import print_history
        print_history(result, out)
    elif args.format == "html":
        from ..web import static
        where, n = static.write(result, args.output)
        out.print(f"wrote {where}: index.html and {n - 1} series page(s)", highlight=False,
                  markup=False)
    else:
        _emit(report.render_history(result, args.format), args.output, out, args.store)
    if not args.fail_on:
        return EXIT_OK
    found = history.failing(result, args.fail_on, args.last)
    within = f"the last {args.last} run(s)" if args.last else "the runs read"
    for s, c in found:
        err.print(f"history: {'regression' if c.regression else 'change'} in {within}: "
                  f"{s.environment} · {s.benchmark} · {s.metric} ({s.kind}) at run {c.run}",
                  highlight=False, markup=False)
    if not found:
        err.print(f"history: no confirmed {args.fail_on} in {within}", highlight=False)
    return EXIT_CHANGED if found else EXIT_OK


def cmd_serve(args, out: Console, err: Console) -> int:
    """The web view over the store until Ctrl-C or SIGTERM (one line, exit 0 either way).
    Read-only: never creates a store."""
    from ..web.serve import serve
    store = _open_store(args, read_only=True)
    how = ""
    try:
        how = serve(store, args.host, args.port,
                    say=lambda line: err.print(line, highlight=False, markup=False),
                    warn=lambda line: err.print(line, highlight=False, markup=False))
    except KeyboardInterrupt:
        pass                        # Ctrl-C is how it stops
    err.print("virtbench serve: stopped" + (f" ({how})" if how else ""), highlight=False)
    return EXIT_OK


def cmd_tune(args, out: Console, err: Console) -> int:
    return tune.cmd_tune(args, out, err, _open_store,
                         lambda store, outcome: _finished(args, out, err, store, outcome))


def cmd_density(args, out: Console, err: Console) -> int:
    result = density.cmd_density(args, out, err)
    if args.format == "table" and not args.output:
        from ...results.report.formats.table import print_density
        print_density(result, out)
    else:
        _emit(report.render_density(result, args.format), args.output, out, args.store)
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:          # --help, --version, or a usage error (exit 2)
        return int(exc.code or 0)
    # a terminal's own width; a pipe the COLUMNS it is given, else 100 for the compact report
    # and 200 for the rest (report --wide, compare, density, a dry run's plan)
    wide = bool(getattr(args, "wide", False) or getattr(args, "dry_run", False)) \
        or args.command not in ("report", "run")
    out = Console(width=width_for(sys.stdout.isatty(), wide))
    # messages are lines, not layout: never hard-wrapped (a log or a grep reads them whole)
    err = Console(stderr=True, soft_wrap=True, width=width_for(sys.stderr.isatty(), True))
    out.on_broken_pipe = _broken_pipe     # rich's own exits with status 1
    commands = {"envs": cmd_envs, "benchmarks": cmd_benchmarks, "image": cmd_image,
                "run": lambda a, o: cmd_run(a, o, err), "runs": cmd_runs,
                "report": cmd_report, "compare": cmd_compare,
                "history": lambda a, o: cmd_history(a, o, err),
                "serve": lambda a, o: cmd_serve(a, o, err),
                "density": lambda a, o: cmd_density(a, o, err), "qemu": qemu.cmd_qemu,
                "tune": lambda a, o: cmd_tune(a, o, err),
                "figures": lambda a, o: figures.cmd_figures(a, o, _open_store),
                "store": storecmd.cmd_store,
                "export": lambda a, o: artifact.cmd_export(a, o, _open_store),
                "import": lambda a, o: artifact.cmd_import(a, o, _open_store),
                "worker": lambda a, o: fleet_commands.cmd_worker(a, o, err),
                "fleet": lambda a, o: fleet_commands.cmd_fleet(a, o, err)}
    try:
        code = commands[args.command](args, out)
        sys.stdout.flush()              # here, where a closed pipe is still caught
        return code
    except VirtbenchError as exc:
        print(f"virtbench: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("virtbench: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # the reader went away (`virtbench report | head -1`): stop quietly, as Unix tools do
        _quiet_stdout()
        return EXIT_OK


def _broken_pipe() -> None:
    raise BrokenPipeError("stdout closed by its reader")


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of what the closed
    pipe did not take says nothing either."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):    # not a file (tests capture it)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
