"""`virtbench worker --name HOST --broker URL --store URL`: a Celery worker serving one
host's queue, one unit at a time (solo pool: the unit runs in the worker's own process, so
a worker that dies takes its unit with it and nothing runs on unseen), until Ctrl-C/SIGTERM.

While it lives the worker keeps a presence key in Redis (lease.py): a busy solo worker cannot
answer Celery's remote control, and `fleet run` must still see that the host is served."""
from __future__ import annotations

import socket

from rich.console import Console

from ...core.errors import VirtbenchError
from ...core.urls import shown
from ...foundations.store import Store
from . import lease
from .app import check_host, make_app, queue_name
from .connect import redis_client
from .unit import register


def serve(name: str, broker: str, store_url: str | None, console: Console,
          visibility: float | None = None) -> int:
    check_host(name)
    client = redis_client(broker)          # one line and exit 2 when it cannot be reached
    store = Store(store_url)               # the same for the store
    app = make_app(broker, visibility)
    register(app)
    app.conf.virtbench_host = name
    app.conf.virtbench_store = store.url
    app.conf.virtbench_redis = client
    app.conf.virtbench_console = console
    presence = lease.worker_presence(client, name)

    import logging
    import warnings

    from celery import signals
    from celery.exceptions import SecurityWarning
    # benchmarks need root here (namespaces, taps); Celery's advice against it is noise
    warnings.filterwarnings("ignore", category=SecurityWarning)
    # a unit handed back (Ctrl-C) says so in its own line; not with Celery's traceback
    logging.getLogger("celery.app.trace").setLevel(logging.ERROR)

    def ready(**_):
        presence.hold()
        console.print(f"worker {name}: serving queue {queue_name(name)} on {shown(broker)}; "
                      f"store {store.shown}", highlight=False)

    stopped_by: list[str] = []

    def shutting_down(sig=None, how=None, **_):
        stopped_by.append(str(sig))

    def shutdown(**_):
        presence.release()
        console.print(f"worker {name}: stopped", highlight=False)

    signals.worker_ready.connect(ready, weak=False)
    signals.worker_shutdown.connect(shutdown, weak=False)
    signals.worker_shutting_down.connect(shutting_down, weak=False)
    worker = app.Worker(queues=[queue_name(name)], pool="solo", concurrency=1,
                        hostname=f"{name}@{socket.gethostname()}", loglevel="WARNING",
                        without_mingle=True, without_gossip=True, quiet=True,
                        optimization="fair")
    try:
        worker.start()
    finally:
        presence.release()
    code = worker.exitcode or 0
    if code and not stopped_by:      # Ctrl-C / SIGTERM is how a worker is meant to stop
        raise VirtbenchError(f"worker {name}: Celery stopped with exit status {code}; "
                             "see the lines above")
    return 0
