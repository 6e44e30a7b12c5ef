#!/usr/bin/env python3
"""What opening a store costs: every virtbench command opens one (Store(URL)).

Times Store(URL) on an existing SQLite file and an existing PostgreSQL database (the tests'
own server: initdb + pg_ctl on a Unix socket) and the first open of an empty one, each the
median of N, each in this process with a fresh engine (a new connection, as a new command has).

    .venv/bin/python bench/store_open.py [-n 9]
    PYTHONPATH=/path/to/older/checkout .venv/bin/python bench/store_open.py   # another version
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.append(str(HERE / "tests"))            # pgserver; a PYTHONPATH checkout comes first


def _median_ms(fn, n: int) -> float:
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=9)
    n = ap.parse_args().n
    import pgserver
    from virtbench.foundations import store as store_mod
    from virtbench.foundations.store import Store

    def open_(url):
        def go(_i):
            Store(url).engine.dispose()
        return go

    server = pgserver.PgServer(pgserver.find_bindir())
    try:
        server.start()
        with tempfile.TemporaryDirectory() as tmp:
            sqlite = f"sqlite:///{tmp}/s.db"
            pg = server.url_for("existing")
            Store(sqlite), Store(pg)
            fresh_pg = [server.url_for(f"fresh{i}") for i in range(n)]
            rows = [
                ("sqlite, existing", _median_ms(open_(sqlite), n)),
                ("sqlite, empty", _median_ms(lambda i: Store(f"sqlite:///{tmp}/f{i}.db")
                                             .engine.dispose(), n)),
                ("postgresql, existing", _median_ms(open_(pg), n)),
                ("postgresql, empty", _median_ms(lambda i: Store(fresh_pg[i]).engine.dispose(),
                                                 n)),
            ]
    finally:
        server.close()
    print(f"virtbench.foundations.store from {Path(store_mod.__file__).parent}")
    for what, ms in rows:
        print(f"Store() {what:22s} median of {n}: {ms:7.1f} ms")


if __name__ == "__main__":
    main()
