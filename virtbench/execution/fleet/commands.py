"""The `worker` and `fleet` commands (parsers and bodies); cli.py wires them in."""
from __future__ import annotations

import os
import sys

from rich.console import Console

from ...core.errors import VirtbenchError
from ...core.text import store_flag

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def add_parsers(sub, add_run_flags) -> None:
    """`worker` and `fleet`; `add_run_flags(parser)` adds `fleet run`'s study flags
    (cli/parser.py: the fields of study/flagset.py StudyFlags)."""
    broker_help = "the Redis broker, redis://HOST:6379/0 (default $VIRTBENCH_BROKER)"
    w = sub.add_parser("worker", help="fleet: serve one host (a Celery worker on its queue)")
    w.add_argument("--name", required=True, metavar="HOST", help="this host's name in the fleet")
    w.add_argument("--broker", metavar="URL", help=broker_help)
    w.add_argument("--store", type=store_flag, metavar="URL",
                   help="sqlite:///file or postgresql://...")
    w.add_argument("--visibility-timeout", type=float, metavar="S",
                   help="seconds before an unacknowledged unit of a dead worker is delivered "
                        "again (default 600, or $VIRTBENCH_VISIBILITY_TIMEOUT)")

    f = sub.add_parser("fleet", help="fleet: one study on many hosts")
    f_sub = f.add_subparsers(dest="fleet_command", required=True, parser_class=sub._parser_class)
    run = f_sub.add_parser("run", help="enqueue a study for each named host")
    run.add_argument("study", nargs="?", help="a study file (TOML)")
    add_run_flags(run)
    run.add_argument("--host", action="append", metavar="NAME", default=[],
                     help="a host (its worker's --name); repeat for several")
    run.add_argument("--broker", metavar="URL", help=broker_help)
    run.add_argument("--store", type=store_flag, metavar="URL",
                     help="sqlite:///file or postgresql://...")
    run.add_argument("--wait", action="store_true", help="follow the hosts until every run ends")
    run.add_argument("--worker-timeout", type=float, default=5.0, metavar="S",
                     help="how long to wait for each host's worker to answer (default 5)")
    st = f_sub.add_parser("status", help="each host's state in a fleet run (default: the latest)")
    st.add_argument("fleet_id", nargs="?", metavar="FLEET_ID")
    st.add_argument("--broker", metavar="URL", help=broker_help)
    st.add_argument("--store", type=store_flag, metavar="URL")


def _broker(args) -> str:
    url = args.broker or os.environ.get("VIRTBENCH_BROKER")
    if not url:
        raise VirtbenchError("no broker: give --broker redis://HOST:6379/0 "
                             "(or set $VIRTBENCH_BROKER)")
    return url


def need_celery() -> None:
    try:
        import celery  # noqa: F401
        import redis  # noqa: F401
    except ImportError:
        raise VirtbenchError("the fleet needs Celery and redis-py: pip install "
                             "'virtbench[fleet]' (scripts/setup.sh --all does)") from None


def cmd_worker(args, out: Console, err: Console) -> int:
    need_celery()
    from ...machinery.host.writes import check_store
    from .worker import serve
    check_store(args.store, create=True)        # host/writes.py: before the worker serves
    return serve(args.name, _broker(args), args.store, err, args.visibility_timeout)


def cmd_fleet(args, out: Console, err: Console) -> int:
    need_celery()
    if args.fleet_command == "run":
        return _fleet_run(args, out, err)
    return _fleet_status(args, out)


def _fleet_run(args, out: Console, err: Console) -> int:
    from ...machinery.host.writes import check_store
    from ...study import design as study_mod, flags as study_flags
    from .enqueue import check_hosts, fleet_run
    check_store(args.store)                     # host/writes.py
    check_hosts(args.host)
    study = study_mod.load(args.study) if args.study else None
    study = study_flags.with_flags(study, study_flags.StudyFlags.from_args(args))
    broker = _broker(args)
    check_store(args.store, create=True)
    fleet_id = fleet_run(study, args.host, broker, args.store, args.worker_timeout)
    out.print(fleet_id, highlight=False)
    sys.stdout.flush()
    if not args.wait:
        err.print(f"enqueued {study.name} for {', '.join(args.host)}; follow it with "
                  f"`virtbench fleet status {fleet_id}`", highlight=False)
        return EXIT_OK
    from ...foundations.store import Store
    from .connect import redis_client
    from .status import wait
    rows = wait(Store(args.store), redis_client(broker), fleet_id,
                lambda line: err.print(line, highlight=False))
    return EXIT_OK if all(r.state == "complete" and not r.failed_trials for r in rows) \
        else EXIT_FAILED


def _fleet_status(args, out: Console) -> int:
    from ...machinery.host.writes import check_store
    from ...foundations.store import Store
    from .status import fleet_status
    check_store(args.store)                     # host/writes.py: a reader's SQLite too
    store = Store(args.store, read_only=True)
    fleet_id = args.fleet_id
    if fleet_id is None:
        fleets = store.list_fleets(limit=1)
        if not fleets:
            raise VirtbenchError(f"store {store.shown} holds no fleet runs yet; start one with "
                                 "`virtbench fleet run`")
        fleet_id = fleets[0]["id"]
    client = None
    url = args.broker or os.environ.get("VIRTBENCH_BROKER")
    if url:
        from .connect import redis_client
        client = redis_client(url)
    fleet = store.get_fleet(fleet_id)
    out.print(f"fleet {fleet_id}: study {fleet['study_name']} on {', '.join(fleet['hosts'])}",
              highlight=False)
    for row in fleet_status(store, client, fleet_id):
        out.print("  " + row.line(), highlight=False)
    return EXIT_OK
