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
    "redis-server": "redis-server", "redis-benchmark": "redis-tools", "redis-cli": "redis-tools",
}


def found(tool: str) -> bool:
    """On PATH, or in an sbin directory a root shell has but a service's PATH may lack."""
    return shutil.which(tool) is not None or any(Path(d, tool).exists()
                                                 for d in ("/usr/sbin", "/sbin"))


def missing(tools: Iterable[str]) -> list[str]:
    """The tools not on this host, in the order given, once each."""
    return [t for t in dict.fromkeys(tools) if not found(t)]


def install_hint(tools: Iterable[str]) -> str:
    packages = sorted({PACKAGES.get(t, t) for t in tools})
    return (f"install with: apt-get install {' '.join(packages)} "
            "(scripts/setup.sh --all installs every benchmark's tools)")
