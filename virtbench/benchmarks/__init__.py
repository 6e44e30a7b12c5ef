"""Benchmark families. Each module holds one family; REGISTRY maps a name to its benchmark.

To add a benchmark: write a Benchmark subclass in its family's module (a command, the tools
it needs, parameters, and a pure parser tested on captured real output) and list it here.
"""
from __future__ import annotations

from ..errors import VirtbenchError
from .base import Benchmark, Metric, ParseError, TrialOutcome
from .application import Blast
from .cpu import CyclePi, Himeno, Pi
from .disk import DISK_BENCHMARKS
from .memory import Stream
from .network import PingHops, RequestResponse, Tcp, Udp
from .transfer import Scp

REGISTRY: dict[str, Benchmark] = {b.name: b for b in (Himeno(), Stream(), Pi(), CyclePi(), Tcp(), Udp(), RequestResponse(), PingHops(), Blast(), Scp())}
REGISTRY.update({b.name: b for b in (cls() for cls in DISK_BENCHMARKS)})


def get(name: str) -> Benchmark:
    if name not in REGISTRY:
        raise VirtbenchError(
            f"unknown benchmark {name!r}; valid benchmarks: {', '.join(sorted(REGISTRY))} "
            "(see `virtbench benchmarks`)")
    return REGISTRY[name]


__all__ = ["Benchmark", "Metric", "ParseError", "TrialOutcome", "REGISTRY", "get"]
