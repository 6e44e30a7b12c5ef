"""ior-rw: IOR-style write then read of one file, as two stonewalled fio jobs (RIKEN 2012)."""
from __future__ import annotations

from ....core.errors import VirtbenchError
from ..base import Metric, ParseError
from .base import DiskBenchmark, fio_base
from .parsers import fio_jobs, fio_rate


class IorRw(DiskBenchmark):
    name = "ior-rw"
    description = ("IOR-style write then read of one file kept between phases "
                   "(RIKEN 2012: ior -w -r -k), as two stonewalled fio jobs")
    metrics = (Metric("write_mb_s", "MB/s", True, "fio write phase, bw_bytes (bw x 1024 before fio 3.2), 10^6 B/s"),
               Metric("read_mb_s", "MB/s", True, "fio read phase of the same file"))
    tools = ("fio",)
    # IOR's own defaults (-b 1m -t 256k, one segment, POSIX without O_DIRECT) write a 1 MiB
    # file; size_mb=1, bs_kb=256, direct=false reproduces RIKEN's literal command. The
    # default here is a 1 GiB file. direct: O_DIRECT with cache=out.
    defaults = {"size_mb": 1024, "bs_kb": 1024, "cache": "out", "runtime_s": 600, "direct": True}
    quick = {"size_mb": 64}

    def check(self, params):
        super().check(params)
        if params["size_mb"] < 1 or params["bs_kb"] < 4 or params["runtime_s"] < 1:
            raise VirtbenchError("benchmark ior-rw: need size_mb >= 1, bs_kb >= 4, runtime_s >= 1")

    def timeout(self, params):
        return 2 * params["runtime_s"] + 300.0

    def command(self, params, trial):
        return fio_base(trial.target, "ior.dat", params["size_mb"]) + [
            f"--bs={params['bs_kb']}k", "--ioengine=psync",
            f"--direct={1 if params['cache'] == 'out' and params['direct'] else 0}",
            f"--runtime={params['runtime_s']}",
            "--name=write", "--rw=write",
            "--name=read", "--rw=read", "--stonewall"]

    def parse(self, stdout):
        jobs = fio_jobs(stdout)
        if "write" not in jobs or "read" not in jobs:
            raise ParseError(f"fio output lacks the write/read jobs (has {sorted(jobs)})")
        return {"write_mb_s": fio_rate(jobs["write"], "write"),
                "read_mb_s": fio_rate(jobs["read"], "read")}
