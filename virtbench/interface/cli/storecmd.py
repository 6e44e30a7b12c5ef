"""`virtbench store upgrade [--store URL]` (docs/store.md): bring a store to this virtbench's
schema revision explicitly. The commands that only read never upgrade a store; this one does,
after a backup of a SQLite file beside it (virtbench/foundations/store/upgrade.py, backup.py), and says
what it did in one line on stdout."""
from __future__ import annotations

from rich.console import Console

from ...core.text import store_flag


def add_parser(sub, parser_class) -> None:
    s = sub.add_parser("store", help="the store itself: upgrade it to this virtbench's schema")
    ss = s.add_subparsers(dest="store_command", required=True, parser_class=parser_class)
    u = ss.add_parser("upgrade", help="bring the store to this virtbench's schema revision "
                                      "(a SQLite file is backed up beside it first); the "
                                      "commands that only read never do")
    u.add_argument("--store", metavar="URL", type=store_flag, help="sqlite:///file or postgresql://... "
                                                  "(default $VIRTBENCH_STORE, else the "
                                                  "default store)")


def cmd_store(args, out: Console) -> int:
    from ...foundations.store import upgrade_store
    from ...machinery.host.writes import check_store
    check_store(args.store, create=False)      # the path every writer checks (host/writes.py)
    done = upgrade_store(args.store)
    out.print(upgraded_line(done), highlight=False, markup=False, soft_wrap=True)
    return 0


def upgraded_line(done) -> str:
    """Pure: the one line `store upgrade` prints for an Upgraded."""
    if not done.changed:
        return f"store {done.shown} is at schema revision {done.after} already: nothing to do"
    was = done.before or "no revision (a store made before revisions)"
    line = f"store {done.shown} upgraded from {was} to {done.after}"
    if done.backup is not None:
        return f"{line}; backup at {done.backup}"
    if done.dialect == "postgresql":
        return (f"{line}; no backup was made (PostgreSQL: take one with `pg_dump` before an "
                "upgrade)")
    return f"{line}; no backup was made"
