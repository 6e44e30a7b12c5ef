"""cdm: the CrystalDiskMark 3.0 profile as one fio run of stonewalled jobs (VirtualBox 2010)."""
from __future__ import annotations

from ....core.errors import VirtbenchError
from ..base import Metric, ParseError
from .base import DiskBenchmark, fio_base
from .parsers import fio_iops, fio_jobs, fio_rate


# CrystalDiskMark 3.0 (the 2010 VirtualBox study): Seq (1 MiB blocks), Random 512 KiB,
# Random 4 KiB QD1, Random 4 KiB QD32, each read then write, test file 50 MB.
CDM_JOBS = (   # jobname, rw, bs, iodepth (None: the seq_qd parameter), reports IOPS
    ("seq1m_read", "read", "1m", None, False),
    ("seq1m_write", "write", "1m", None, False),
    ("rnd512k_read", "randread", "512k", 1, False),
    ("rnd512k_write", "randwrite", "512k", 1, False),
    ("rnd4k_qd1_read", "randread", "4k", 1, True),
    ("rnd4k_qd1_write", "randwrite", "4k", 1, True),
    ("rnd4k_qd32_read", "randread", "4k", 32, True),
    ("rnd4k_qd32_write", "randwrite", "4k", 32, True),
)


class Cdm(DiskBenchmark):
    name = "cdm"
    description = ("CrystalDiskMark 3.0 profile as one fio run of stonewalled jobs: seq 1 MiB, "
                   "random 512 KiB, random 4 KiB QD1 and QD32, read and write (VirtualBox 2010)")
    metrics = tuple(
        [Metric(f"{job}_mb_s", "MB/s", True, f"fio job {job}: bw_bytes (bw x 1024 before fio 3.2), 10^6 B/s as CDM")
         for job, *_ in CDM_JOBS]
        + [Metric(f"{job}_iops", "IOPS", True, f"fio job {job}: IOPS")
           for job, _rw, _bs, _qd, iops in CDM_JOBS if iops])
    tools = ("fio",)
    # CDM 3.0 ran its sequential test at QD1 (CDM 5+ use QD32/QD8: seq_qd=8 for that);
    # the study's test file was 50 MB. Each job stops at runtime_s if the file is not done.
    # direct: CDM always opens its file unbuffered; cache=in keeps direct=1 by default, so
    # "in" means warm caches *below* the environment (a guest's host page cache), as in the
    # study's "in ZFS ARC" case. direct=false with cache=in lets the env's page cache serve.
    defaults = {"size_mb": 50, "seq_qd": 1, "runtime_s": 30, "time_based": False,
                "cache": "out", "direct": True}
    quick = {"size_mb": 32, "runtime_s": 1, "time_based": True}

    def check(self, params):
        super().check(params)
        if params["size_mb"] < 2 or params["seq_qd"] < 1 or params["runtime_s"] < 1:
            raise VirtbenchError("benchmark cdm: need size_mb >= 2, seq_qd >= 1, runtime_s >= 1")

    def timeout(self, params):
        return 300.0 + 2 * len(CDM_JOBS) * params["runtime_s"] + params["size_mb"]

    def command(self, params, trial):
        direct = 1 if params["cache"] == "out" or params["direct"] else 0
        argv = fio_base(trial.target, "cdm.dat", params["size_mb"]) + [
            "--ioengine=libaio", f"--direct={direct}", f"--runtime={params['runtime_s']}",
            "--randrepeat=0"]
        if params["time_based"]:
            argv.append("--time_based")
        for job, rw, bs, qd, _ in CDM_JOBS:
            argv += [f"--name={job}", f"--rw={rw}", f"--bs={bs}",
                     f"--iodepth={qd or params['seq_qd']}", "--stonewall"]
        return argv

    def parse(self, stdout):
        jobs = fio_jobs(stdout)
        values = {}
        for job, rw, _bs, _qd, iops in CDM_JOBS:
            if job not in jobs:
                raise ParseError(f"fio output lacks job {job}")
            direction = "write" if "write" in rw else "read"
            values[f"{job}_mb_s"] = fio_rate(jobs[job], direction)
            if iops:
                values[f"{job}_iops"] = fio_iops(jobs[job], direction)
        return values
