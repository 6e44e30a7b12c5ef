"""`virtbench density` (docs/lifecycle.md): its flags and command. The sweep itself is in
execution/run/density.py, imported only when the command runs (it loads the runner and the
analysis); its defaults are core/defaults.py's. `virtbench density STUDY.toml` sweeps the
study's [density] table (study/densityfile.py), a flag given overriding its key."""
from __future__ import annotations

from ...core import defaults
from ...core.errors import VirtbenchError
from ...core.text import store_flag


def add_parser(sub) -> None:
    d = sub.add_parser("density", help="add guests running a benchmark until this host stops "
                                       "scaling: the curve, its knee, why it stopped")
    d.add_argument("study", nargs="?", metavar="STUDY.toml",
                   help="a study file with a [density] table (the flags override its keys)")
    d.add_argument("--env", metavar="SPEC",
                   help="the environment to add copies of (qemu, qemu:mem=256M, container...)")
    d.add_argument("--bench", action="append", metavar="NAME[:key=value,...]",
                   help="benchmark every guest runs at once; repeat for several")
    d.add_argument("--max", type=int, dest="max_count",
                   help=f"the most guests (default {defaults.DENSITY_MAX_GUESTS})")
    d.add_argument("--trials", type=int,
                   help=f"trials per step (default {defaults.DENSITY_TRIALS})")
    d.add_argument("--quick", action="store_true", default=None,
                   help="the benchmarks' small sizes")
    d.add_argument("--schedule", choices=("linear", "doubling"),
                   help="1, 2, 3 ... (default) or 1, 2, 4 ...")
    d.add_argument("--floor", type=float,
                   help="QoS: each guest keeps at least this share of one guest's "
                        f"throughput (default {defaults.DENSITY_FLOOR:g})")
    d.add_argument("--min-gain", type=float,
                   help="a step must raise the aggregate by this share (default "
                        f"{defaults.DENSITY_MIN_GAIN:g})")
    d.add_argument("--max-time", type=float, metavar="SECONDS",
                   help=f"no new step after this long (default {defaults.DENSITY_MAX_S:g})")
    d.add_argument("--metric", action="append", metavar="BENCH=METRIC",
                   help="judge BENCH on METRIC (default: its first timed metric)")
    d.add_argument("--no-reference", action="store_true",
                   help="no native processes at the same counts")
    d.add_argument("--format", default="table",
                   choices=("table", "markdown", "json", "csv", "html", "latex"))
    d.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    d.add_argument("--store", type=store_flag, metavar="URL")
    d.add_argument("--no-progress", action="store_true", help="no progress bar")


def metric_flags(texts: list[str] | None) -> dict[str, str]:
    """--metric BENCH=METRIC flags as {BENCH: METRIC}; one line for one without `=`."""
    metrics = {}
    for text in texts or []:
        bench, sep, metric = text.partition("=")
        if not sep or not bench or not metric:
            raise VirtbenchError(f"density --metric {text}: write BENCH=METRIC "
                                 "(e.g. stream=triad_mb_s)")
        metrics[bench] = metric
    return metrics


def request_values(args) -> dict:
    """The DensityRequest's values: the study's [density] table's (when a STUDY.toml is
    given), each flag given over its key; the rest DensityRequest's defaults."""
    from ...study.densityfile import load_density
    given = {"spec": args.env, "benches": args.bench, "max_count": args.max_count,
             "trials": args.trials, "quick": args.quick, "schedule": args.schedule,
             "floor": args.floor, "min_gain": args.min_gain, "max_s": args.max_time,
             "reference": False if args.no_reference else None,
             "metrics": metric_flags(args.metric) or None}
    values = {}
    if args.study:
        t = load_density(args.study)
        values = {"spec": t.env, "benches": list(t.bench), "max_count": t.max,
                  "trials": t.trials, "quick": t.quick, "schedule": t.schedule,
                  "floor": t.floor, "min_gain": t.min_gain, "max_s": t.max_time,
                  "reference": t.reference, "metrics": dict(t.metric)}
    values.update({k: v for k, v in given.items() if v is not None})
    if "spec" not in values:
        raise VirtbenchError("density: give --env SPEC (or a study file with a [density] "
                             "table: virtbench density STUDY.toml)")
    if "benches" not in values:
        raise VirtbenchError("density: give at least one --bench NAME")
    return values


def cmd_density(args, out, err):
    """Run the sweep the flags (and the study's [density] table) describe; bad input raises
    before anything starts (the store and -o FILE included: host/writes.py)."""
    from ...machinery.host.writes import check_output, check_store
    from ...foundations.store import Store
    from ...execution.run.density import DensityRequest, Sweep
    check_store(args.store)
    if args.output:
        check_output(args.output, args.store)
    request = DensityRequest(**request_values(args))
    sweep = Sweep(request, console=err, show_progress=not args.no_progress)
    check_store(args.store, create=True)
    sweep.store = Store(args.store)
    return sweep.run()
