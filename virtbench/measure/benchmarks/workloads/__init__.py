"""The workloads people run (issue 39): servers (redis, pgbench, nginx), a compile, the HPC
Challenge and an open suite of SPEC CPU's programs, each a benchmark like any other: a
command run in an environment through its exec(), parsed by a pure function tested on the
tool's captured output, decided in the same paired blocks.

Shared here: `served.py` (a server and its client in one command of the environment, nothing
left behind) and `percentiles.py` (which latency percentiles a trial supports, and whether
its load was open or closed loop)."""
