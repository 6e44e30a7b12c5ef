"""The programs benchmarks run on this host (bare metal), and the Debian packages that bring them.

`scripts/setup.sh` installs only what the main job needs; a benchmark whose program is missing
here is said before the run starts, in one line naming the package (`setup.sh --all` installs
every benchmark's)."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Iterable

PACKAGES = {
    "fio": "fio", "hdparm": "hdparm", "bonnie++": "bonnie++", "dd": "coreutils",
    "iperf3": "iperf3", "sockperf": "sockperf", "ping": "iputils-ping",
    "sshd": "openssh-server", "blastn": "ncbi-blast+", "makeblastdb": "ncbi-blast+",
    "python3": "python3",
    "make": "make", "gcc": "gcc", "tar": "tar",
    "nginx": "nginx-light", "wrk": "wrk", "truncate": "coreutils",
    "hpcc": "hpcc", "mpirun": "openmpi-bin",
    "/usr/games/gnugo": "gnugo", "hmmsearch": "hmmer", "hmmbuild": "hmmer", "povray": "povray",
    "bzip2": "bzip2", "gcc": "gcc", "Xalan": "xalan", "x264": "x264",
    "/usr/games/stockfish": "stockfish",
    "/usr/lib/postgresql/15/bin/initdb": "postgresql-15",
    "/usr/lib/postgresql/15/bin/postgres": "postgresql-15",
    "/usr/lib/postgresql/15/bin/pg_isready": "postgresql-15",
    "/usr/lib/postgresql/15/bin/pgbench": "postgresql-15",
    "runuser": "util-linux", "awk": "mawk", "sort": "coreutils",
    "redis-server": "redis-server", "redis-benchmark": "redis-tools", "redis-cli": "redis-tools",
}


def found(tool: str) -> bool:
    """On PATH, or in an sbin directory a root shell has but a service's PATH may lack."""
    return shutil.which(tool) is not None or any(Path(d, tool).exists()
                                                 for d in ("/usr/sbin", "/sbin"))


def missing(tools: Iterable[str]) -> list[str]:
    """The tools not on this host, in the order given, once each."""
    return [t for t in dict.fromkeys(tools) if not found(t)]


def install_hint(tools: Iterable[str], where: str | None = None) -> str:
    """What to install for `tools` (their Debian packages), on this host (`where` None) or on
    the machine `where` names (an SSH target's address, a libvirt domain)."""
    packages = sorted({PACKAGES.get(t, t) for t in tools})
    if where:
        return f"install with: apt-get install {' '.join(packages)} on {where}"
    return (f"install with: apt-get install {' '.join(packages)} "
            "(scripts/setup.sh --all installs every benchmark's tools)")
