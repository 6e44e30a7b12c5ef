"""Benchmark families. Each module holds one family; REGISTRY maps a name to its benchmark.

To add a benchmark: write a Benchmark subclass in its family's module (a command, the tools
it needs, parameters, and a pure parser tested on captured real output) and list it here.
"""
from __future__ import annotations

from ...core.errors import VirtbenchError
from ...core.suggest import did_you_mean
from .base import Benchmark, Metric, ParseError, TrialOutcome
from . import (application, cpu, disk, lifecycle_costs, memory, network, primitives, transfer,
               workloads)

# One tuple per family module, in the order `virtbench benchmarks` lists them.
_CLASSES = (
    (cpu.Himeno, cpu.Pi, cpu.CyclePi)
    + (memory.Stream,)
    + (primitives.Primitives,)
    + disk.DISK_BENCHMARKS
    + (network.Tcp, network.GuestToGuestTcp, network.Udp, network.RequestResponse, network.PingHops)
    + (transfer.Scp,)
    + (application.Blast,)
    + workloads.WORKLOAD_BENCHMARKS
    + (lifecycle_costs.Boot, lifecycle_costs.FootprintBenchmark, lifecycle_costs.Snapshot,
       lifecycle_costs.Migrate)
)
REGISTRY: dict[str, Benchmark] = {b.name: b for b in (cls() for cls in _CLASSES)}

def get(name: str) -> Benchmark:
    if name not in REGISTRY:
        raise VirtbenchError(
            f"unknown benchmark {name!r}{did_you_mean(name, REGISTRY)}; valid benchmarks: {', '.join(sorted(REGISTRY))} "
            "(see `virtbench benchmarks`)")
    return REGISTRY[name]


__all__ = ["Benchmark", "Metric", "ParseError", "TrialOutcome", "REGISTRY", "get"]
