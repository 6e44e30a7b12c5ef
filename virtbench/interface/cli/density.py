"""`virtbench density` (docs/lifecycle.md): its flags and command. The sweep itself is in
execution/run/density.py, imported only when the command runs (it loads the runner and the
analysis); its defaults are core/defaults.py's."""
from __future__ import annotations

from ...core import defaults
from ...core.errors import VirtbenchError
from ...core.text import store_flag


def add_parser(sub) -> None:
    d = sub.add_parser("density", help="add guests running a benchmark until this host stops "
                                       "scaling: the curve, its knee, why it stopped")
    d.add_argument("--env", required=True, metavar="SPEC",
                   help="the environment to add copies of (qemu, qemu:mem=256M, container...)")
    d.add_argument("--bench", action="append", required=True, metavar="NAME[:key=value,...]",
                   help="benchmark every guest runs at once; repeat for several")
    d.add_argument("--max", type=int, default=defaults.DENSITY_MAX_GUESTS, dest="max_count",
                   help="the most guests (default %(default)s)")
    d.add_argument("--trials", type=int, default=defaults.DENSITY_TRIALS,
                   help="trials per step (default %(default)s)")
    d.add_argument("--quick", action="store_true", help="the benchmarks' small sizes")
    d.add_argument("--schedule", choices=("linear", "doubling"), default="linear",
                   help="1, 2, 3 ... (default) or 1, 2, 4 ...")
    d.add_argument("--floor", type=float, default=defaults.DENSITY_FLOOR,
                   help="QoS: each guest keeps at least this share of one guest's "
                        "throughput (default %(default)g)")
    d.add_argument("--min-gain", type=float, default=defaults.DENSITY_MIN_GAIN,
                   help="a step must raise the aggregate by this share (default %(default)g)")
    d.add_argument("--max-time", type=float, default=defaults.DENSITY_MAX_S, metavar="SECONDS",
                   help="no new step after this long (default %(default)g)")
    d.add_argument("--metric", action="append", metavar="BENCH=METRIC",
                   help="judge BENCH on METRIC (default: its first timed metric)")
    d.add_argument("--no-reference", action="store_true",
                   help="no native processes at the same counts")
    d.add_argument("--format", default="table", choices=("table", "json", "html"))
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


def cmd_density(args, out, err):
    """Run the sweep the flags describe; bad input raises before anything starts (the store
    and -o FILE included: host/writes.py)."""
    from ...machinery.host.writes import check_output, check_store
    from ...foundations.store import Store
    from ...execution.run.density import DensityRequest, Sweep
    check_store(args.store)
    if args.output:
        check_output(args.output, args.store)
    request = DensityRequest(
        spec=args.env, benches=args.bench, max_count=args.max_count, trials=args.trials,
        quick=args.quick, schedule=args.schedule, floor=args.floor, min_gain=args.min_gain,
        max_s=args.max_time, reference=not args.no_reference,
        metrics=metric_flags(args.metric))
    sweep = Sweep(request, console=err, show_progress=not args.no_progress)
    check_store(args.store, create=True)
    sweep.store = Store(args.store)
    return sweep.run()
