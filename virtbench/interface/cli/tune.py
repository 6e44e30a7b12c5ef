"""`virtbench tune` (docs/tune.md): which knobs matter, the best setting, confirmed. Its flags
are the study flags (study/flagset.py; `--env` is the base, once) with the tune's own; the
study it runs is study/tune.py's, run by the runner like any other (its confirmation:
execution/run/tune.py), stored as a run, reported by `virtbench report`."""
from __future__ import annotations

from dataclasses import replace

from rich.console import Console
from rich.markup import escape

from ...core import defaults
from ...core.errors import VirtbenchError
from ...core.text import store_flag


def add_parser(sub, add_study_flags, add_verbosity_flags) -> None:
    t = sub.add_parser("tune", help="which knobs of an environment matter and their best "
                                    "setting: a screening design, effects, a confirmed "
                                    "recommendation")
    t.add_argument("study", nargs="?", help="a study file (TOML); its [tune] table, its "
                                            "benchmarks")
    add_study_flags(t)
    t.add_argument("--knob", action="append", metavar="NAME=L1,L2",
                   help="an option of the base's kind and its two levels; repeat for "
                        "several (e.g. --knob cpus=0.5,2)")
    t.add_argument("--metric", action="append", metavar="NAME",
                   help="a metric to improve; repeat for several (default: each "
                        "benchmark's headline metric)")
    t.add_argument("--min-effect", type=float, metavar="PCT",
                   help="the smallest effect that matters, %% (default "
                        f"{defaults.TUNE_MIN_EFFECT_PCT:g})")
    t.add_argument("--refine", type=int, metavar="N",
                   help="after the screening, try the levels between a knob's first and last "
                        "(a knob may then have more than two) against the best so far; a "
                        "knob's search stops after N tries in a row that did not move it")
    t.add_argument("--dry-run", action="store_true",
                   help="print the design (resolution, aliasing, configurations, blocks, "
                        "expected time) and exit")
    t.add_argument("--store", type=store_flag, metavar="URL")
    t.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_verbosity_flags(t)


def tune_study(args):
    """The study the flags (over a study file) describe, as study/tune.py runs it; every
    problem is one line (exit 2) before anything is probed, stored or run."""
    from ...study import design as study_mod, flags as study_flags, tune as study_tune
    from ...study.flagset import StudyFlags
    study = study_mod.load(args.study) if args.study else None
    given = study.tune if study is not None else None
    if args.baseline is not None:
        raise VirtbenchError("tune: the base is every comparison's reference; drop --baseline")
    if args.env and len(args.env) != 1:
        raise VirtbenchError(f"tune: --env names the base configuration, once, not "
                             f"{len(args.env)} times (the knobs make the others)")
    base = args.env[0] if args.env else given.base if given else None
    if base is None:
        raise VirtbenchError("tune: no base; give --env SPEC (e.g. --env container) or a "
                             "study file with a [tune] table")
    knobs = ([study_tune.parse_knob(k) for k in args.knob] if args.knob
             else list(given.knobs) if given else [])
    entry = study_tune.TuneEntry(
        base=base, knobs=knobs,
        metrics=list(args.metric) if args.metric else list(given.metrics) if given else [],
        min_effect_pct=(args.min_effect if args.min_effect is not None
                        else given.min_effect_pct if given else defaults.TUNE_MIN_EFFECT_PCT),
        refine=args.refine if args.refine is not None else given.refine if given else None)
    flags = StudyFlags.from_args(args)
    study = study_flags.with_flags(study, replace(flags, env=None))
    if flags.trials is None and given is None:
        study = replace(study, trials=defaults.TUNE_TRIALS)
    if args.study is None:
        study = replace(study, name="tune")          # not "adhoc": `runs` tells it apart
    return study_mod.tuned(study, entry)


def cmd_tune(args, out: Console, err: Console, open_store, show_report) -> int:
    """Run the tune the flags describe (or print its design with --dry-run)."""
    from ...machinery.host.writes import check_store
    from ...execution.run.runner import Runner, estimate_s, prepare
    if not args.dry_run:
        check_store(args.store)
    study = tune_study(args)
    prepared = prepare(study, dry_run=args.dry_run)
    if args.dry_run:
        return _print_design(prepared, out, estimate_s(prepared))
    store = open_store(args)
    outcome = Runner(store, console=err, show_progress=not args.no_progress).start(prepared)
    return show_report(store, outcome)


def _print_design(prepared, out: Console, estimate: float) -> int:
    from ...foundations.model import RunReport
    from ...results.analysis.tune import tune_section
    from ...results.report.fmt import tune as tune_fmt
    study = prepared.study
    section = tune_section(RunReport(), study)
    confirm = max(study.trials, defaults.TUNE_CONFIRM_BLOCKS)
    envs = len(prepared.envs)
    per_env = estimate / envs if envs else 0.0
    total = estimate + per_env * 2 * confirm / max(study.trials, 1)
    from ...study.tune import looks
    schedule = looks(study.min_trials, study.max_trials) if study.adaptive else None
    for line in tune_fmt.design_lines(section, study.trials, confirm, len(prepared.cases),
                                      total, schedule):
        out.print(escape(line), highlight=False)
    entry = study.tune
    inner = [f"{k.name} ({', '.join(k.levels[1:-1])})" for k in entry.knobs
             if len(k.levels) > 2]
    if entry.refine and inner:
        out.print(escape(f"refine: if their knob matters, the levels between the ends of "
                         f"{', '.join(inner)} are tried against the best so far, "
                         f"{max(study.trials, 3)} block(s) each; a knob's search stops after "
                         f"{entry.refine} tries in a row that do not move it"), highlight=False)
    return 0
