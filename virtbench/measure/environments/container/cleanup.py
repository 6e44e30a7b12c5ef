"""What a container environment leaves behind, removed whatever happens.

Like a QEMU guest: a work directory `vbctr-*` in the work root (guest/watch.py's WorkDir) holds
a manifest (the container's name, its podman volume, its network namespaces), kept current as
they are made; a guardian process (guest/guardian.py) removes everything listed when virtbench
dies without saying "done" (SIGKILL, a crash), and stop() runs the same cleanup. The next
start sweeps what a dead owner left: work directories whose owner is gone, `vb-*` namespaces
(netns.py), and any container labelled with a dead owner.
"""
from __future__ import annotations

import os
import subprocess

from ....machinery.host.net import netns
from ....core.errors import VirtbenchError
from ....machinery.host import guardian, watch
from . import podman

WORK_PREFIX = "vbctr-"


def owner() -> str:
    me = os.getpid()
    return f"{me} {netns.process_start_time(me)}"


def podman_argv() -> list[str]:
    """podman and its global flags, as virtbench runs it (never as a manifest says)."""
    return [podman.podman_binary(), *podman.global_flags()]


def parse_ps(text: str) -> list[tuple[str, str]]:
    """(name, owner label) pairs from `podman ps -a --format '{{.Names}}\\t{{.Labels}}'`
    restricted by a label filter; the owner is read from podman's `map[k:v ...]` text (pure)."""
    pairs = []
    for line in text.splitlines():
        name, _, labels = line.partition("\t")
        if not name.strip():
            continue
        owner_text = ""
        key = podman.OWNER_LABEL + ":"
        if key in labels:
            rest = labels.split(key, 1)[1]
            # the owner is "<pid> <starttime>": two words, then the next label or "]"
            owner_text = " ".join(rest.replace("]", " ").split()[:2])
        pairs.append((name.strip(), owner_text))
    return pairs


def sweep_stale() -> list[str]:
    """Remove what dead virtbench processes left: namespaces, vbctr-* work directories (with
    the containers and volumes their manifests list), and containers with a dead owner."""
    removed = netns.sweep_stale()
    removed += watch.sweep(WORK_PREFIX, podman_argv())
    try:
        proc = podman.run_podman(["ps", "-a", "--filter", f"label={podman.OWNER_LABEL}",
                                  "--format", "{{.Names}}\t{{.Labels}}"], timeout=60)
    except (OSError, VirtbenchError, subprocess.TimeoutExpired):
        return removed
    for name, owner_text in parse_ps(proc.stdout):
        if not netns.owner_alive(owner_text):
            guardian.remove_container(podman_argv(), name)
            removed.append(name)
    return removed
