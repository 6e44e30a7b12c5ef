"""Disk benchmarks: dd, hdparm, IOR-style fio, bonnie++ and the CrystalDiskMark profile.

parsers: pure parsers of the tools' output; base: DiskBenchmark, the life cycle they share;
physical_limit: the device-rating model; dd, hdparm, ior, bonnie, cdm: one benchmark each.

Every benchmark writes only inside `env.scratch_dir()` (a directory of its own, removed after
each trial) and reads `env.scratch_device()` read-only; none ever writes a raw device.

Units: every MB/s here is 10^6 bytes/s (as CrystalDiskMark: "MB/s = 1,000,000 byte/s");
hdparm's MiB and bonnie++'s KiB are converted.

`cache` (on every benchmark): "out" drops the environment's page cache before the measured
pass (a guest also drops its host's) and uses direct I/O where the tool has it; "in" runs a
warm pass first, then the measured pass with buffered I/O, so every cache layer may serve it.

After a trial, each MB/s result is compared with the rated speed of the device that bounds it
(physical_limit: the host device under native's scratch directory, or under a guest's scratch
image on any bus); a result above it becomes one "physical-limit" warning per environment and
benchmark, naming the cache mode in use that most likely served it.
"""
from __future__ import annotations

from .bonnie import Bonnie
from .cdm import Cdm
from .dd import DdWrite
from .hdparm import HdparmRead
from .ior import IorRw

DISK_BENCHMARKS = (DdWrite, HdparmRead, IorRw, Bonnie, Cdm)
