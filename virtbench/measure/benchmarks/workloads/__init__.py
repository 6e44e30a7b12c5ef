"""The workloads people run (issue 39): servers (redis, pgbench, nginx), a compile, the HPC
Challenge and an open suite of SPEC CPU's programs, each a benchmark like any other: a
command run in an environment through its exec(), parsed by a pure function tested on the
tool's captured output, decided in the same paired blocks.

Shared here: `served.py` (a server and its client in one command of the environment, nothing
left behind) and `percentiles.py` (which latency percentiles a trial supports, and whether
its load was open or closed loop). Each workload: its benchmark module and, where its
tool's output needs one, a pure parser beside it (`<tool>_output.py`)."""
from __future__ import annotations

from .compile import Compile
from .cpusuite.suite import CpuSuite
from .hpcc import Hpcc
from .nginx import Nginx
from .pgbench import Pgbench
from .redis import Redis

# in the order `virtbench benchmarks` lists them: the servers, then the batch workloads
WORKLOAD_BENCHMARKS = (Redis, Pgbench, Nginx, Compile, Hpcc, CpuSuite)
