"""`virtbench qemu fetch SUITE` and `virtbench qemu list` (docs/versions.md): another QEMU
from a Debian suite, in virtbench's cache, for `--env qemu:binary=PATH`. The fetcher is
image/qemu_fetch.py; this is its command line. `fetch` prints its progress on stderr and the
binary's path alone on the last line of stdout (`| tail -1`)."""
from __future__ import annotations

import argparse
import sys


def _mirror(text: str) -> str:
    """--mirror URL: one http://, https:// or file:// URL, nothing else (image/qemu_fetch.py)."""
    from ...machinery.image import qemu_fetch
    problem = qemu_fetch.mirror_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def add_parser(sub, parser_class) -> None:
    q = sub.add_parser("qemu", help="another QEMU from a Debian suite (for qemu:binary=)")
    qs = q.add_subparsers(dest="qemu_command", required=True, parser_class=parser_class)
    f = qs.add_parser("fetch", help="download a suite's QEMU into the cache (a private apt "
                                    "configuration; the system is not touched); prints the "
                                    "binary's path last")
    f.add_argument("suite", help="a Debian suite: bookworm-backports, trixie, ...")
    f.add_argument("--mirror", type=_mirror, default=None, metavar="URL",
                   help="the Debian mirror (default http://deb.debian.org/debian)")
    f.add_argument("--unsigned", action="store_true",
                   help="the mirror is one you made and did not sign (apt's trusted=yes), "
                        "e.g. a local test repository")
    f.add_argument("--force", action="store_true", help="fetch again even if cached")
    qs.add_parser("list", help="the QEMUs in the cache: suite, version, path, size, date")


def cmd_qemu(args, out) -> int:
    from ...machinery.image import qemu_fetch
    if args.qemu_command == "fetch":
        fetched = qemu_fetch.fetch(
            args.suite, mirror=args.mirror or qemu_fetch.MIRROR, trusted=args.unsigned,
            force=args.force,
            progress=lambda msg: print(f"  qemu fetch: {msg}", file=sys.stderr, flush=True))
        info = fetched.info
        versions = ", ".join(f"{p['name']} {p['version']}" for p in info["packages"])
        print(f"  QEMU {info['qemu_version']} from {info['suite']} ({versions})",
              file=sys.stderr, flush=True)
        print(fetched.binary, flush=True)
        return 0
    rows = qemu_fetch.listing()
    if not rows:
        print("no QEMU in the cache; fetch one with: virtbench qemu fetch bookworm-backports")
        return 0
    from rich.table import Table
    t = Table("suite", "QEMU", "binary", "size", "fetched")
    for r in rows:
        t.add_row(r["suite"], r["qemu_version"] or "[red]does not check out: fetch it again "
                  "with --force[/]", r["path"], f"{r['size'] / 2**20:.0f} MiB",
                  r["fetched"] or "")
    out.print(t)
    return 0
