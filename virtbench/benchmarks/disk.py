"""Disk benchmarks: dd, hdparm, IOR-style fio, bonnie++ and the CrystalDiskMark profile.

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

import json
import posixpath
import re
import subprocess
from dataclasses import dataclass, field
from typing import Any

from ..errors import AgentError, VirtbenchError
from .base import Benchmark, Metric, ParseError, TrialOutcome, exec_error
from .physical_limit import DEVICE_FACTS_SCRIPT, LIMITS, parse_device_facts

MB = 1_000_000
MIB = 1024 * 1024
C_LOCALE = {"LC_ALL": "C"}   # dd and friends print decimal points, not commas
CACHES = ("out", "in")


class TrialFailed(Exception):
    """A step around the measured command failed: the trial fails with this message."""


# ======================================================================================
# Pure parsers
# ======================================================================================

_DD_UNITS = {"B/s": 1, "kB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12,
             "KiB/s": 1024, "MiB/s": MIB, "GiB/s": 1024 ** 3}
# GNU coreutils >= 8.24: "67108864 bytes (67 MB, 64 MiB) copied, 0.0476309 s, 1.4 GB/s"
# small transfers:       "500 bytes copied, 1.10253 s, 0.5 kB/s"
# coreutils < 8.24:      "1073741824 bytes (1.1 GB) copied, 4.07 s, 263 MB/s"
# BSD / old GNU (the Xen 2006 article):
#                        "33554432 bytes transferred in 17.615797 seconds (1904792 bytes/sec)"
_DD_GNU = re.compile(r"^(\d+) bytes?(?: \([^)]*\))? copied, ([0-9.]+(?:e[-+]?\d+)?) s, "
                     r"([0-9.]+) ([kMGT]?i?B/s)\s*$")
_DD_BSD = re.compile(r"^(\d+) bytes transferred in ([0-9.]+) secs?(?:onds)? \((\d+) bytes/sec\)")


def parse_dd(stderr: str) -> dict[str, float]:
    """dd's summary line -> {"bytes", "seconds", "mb_s"}; MB/s computed from bytes/seconds
    (dd's own figure is rounded to 2-3 digits and its unit varies)."""
    found = None
    for line in stderr.splitlines():
        line = line.strip()
        m = _DD_GNU.match(line) or _DD_BSD.match(line)
        if m:
            found = m
    if found is None:
        raise ParseError("no dd summary line ('N bytes ... copied, S s, X MB/s')")
    nbytes, seconds = int(found.group(1)), float(found.group(2))
    if nbytes <= 0:
        raise ParseError("dd copied 0 bytes")
    if seconds <= 0:
        raise ParseError("dd reports 0 s: too short to time")
    return {"bytes": float(nbytes), "seconds": seconds, "mb_s": nbytes / seconds / MB}


# hdparm 9.65: " Timing buffered disk reads: 512 MB in  1.09 seconds = 470.66 MB/sec"
# (its MB is MiB: a 512 MiB device reads as "512 MB"); slow devices print kB/sec (KiB).
_HDPARM = re.compile(r"Timing (buffered|O_DIRECT) disk reads:\s+(\d+) MB in\s+([0-9.]+) seconds"
                     r"\s*=\s*([0-9.]+) (MB|kB)/sec")


def parse_hdparm(stdout: str) -> dict[str, float]:
    """hdparm -t's timing line -> {"read_mb_s"} in 10^6 B/s (hdparm prints MiB/s)."""
    matches = _HDPARM.findall(stdout)
    if not matches:
        raise ParseError("no 'Timing buffered disk reads: ... = X MB/sec' line")
    _, _mib, seconds, rate, unit = matches[-1]
    per_s = float(rate) * (MIB if unit == "MB" else 1024)
    if per_s <= 0 or float(seconds) <= 0:
        raise ParseError("hdparm reports a zero rate or time")
    return {"read_mb_s": per_s / MB}


def fio_json(stdout: str) -> dict:
    """fio's --output-format=json document, skipping any lines fio printed before it
    (notes and warnings such as 'note: both iodepth >= 1 and synchronous I/O engine...')."""
    lines = stdout.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith("{"):
            text = "".join(lines[i:])
            try:
                doc, _ = json.JSONDecoder().raw_decode(text)
            except ValueError as exc:
                raise ParseError(f"fio's JSON output is malformed or truncated: {exc}") from exc
            if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
                raise ParseError("fio's JSON output has no jobs list")
            return doc
    raise ParseError("no JSON document in fio's output")


def fio_jobs(stdout: str) -> dict[str, dict]:
    """jobname -> job, failing on a job fio reports as failed."""
    jobs: dict[str, dict] = {}
    for job in fio_json(stdout)["jobs"]:
        name = job.get("jobname")
        if not isinstance(name, str):
            raise ParseError("a fio job without a jobname")
        if job.get("error"):
            raise ParseError(f"fio job {name} failed with error {job['error']}")
        jobs[name] = job
    return jobs


def _fio_number(job: dict, direction: str, key: str) -> float:
    try:
        value = float(job[direction][key])
    except (KeyError, TypeError, ValueError) as exc:
        raise ParseError(f"fio job {job.get('jobname')}: no {direction}.{key}") from exc
    if not value > 0:
        raise ParseError(f"fio job {job.get('jobname')}: {direction}.{key} is {value}: "
                         "the job did no I/O")
    return value


def fio_rate(job: dict, direction: str) -> float:
    """MB/s (10^6) of one direction of a job, from bw_bytes."""
    return _fio_number(job, direction, "bw_bytes") / MB


def fio_iops(job: dict, direction: str) -> float:
    return _fio_number(job, direction, "iops")


# bonnie++ CSV, format 1.98 (bonnie++ 1.98 .. 2.00a; field positions as bon_csv2txt reads
# them): 0 format, 1 version, 2 name, 3 concurrency, 4 seed, 5 file size, 6 chunk size,
# 7 seeks, 8 seek processes, 9/10 putc + %CPU, 11/12 block write, 13/14 rewrite,
# 15/16 getc, 17/18 block read, 19/20 random seeks, 21..37 file tests, 38..49 latencies.
BONNIE_FIELDS = {          # metric prefix -> (rate index, cpu index, unit is K/sec)
    "char_write": (9, 10, True),
    "block_write": (11, 12, True),
    "rewrite": (13, 14, True),
    "char_read": (15, 16, True),
    "block_read": (17, 18, True),
    "seeks": (19, 20, False),
}


@dataclass
class BonnieResult:
    values: dict[str, float]
    unmeasured: list[str]       # tests bonnie++ ran but printed "+++++" for (too fast to time)


def parse_bonnie(stdout: str) -> BonnieResult:
    """bonnie++ -q's CSV line -> MB/s (10^6; bonnie++ prints KiB/s) and %CPU per test."""
    rows = [line.strip().split(",") for line in stdout.splitlines()
            if line.strip().startswith(("1.98,", "1.97,"))]
    if not rows:
        raise ParseError("no bonnie++ CSV line (format 1.98)")
    row = rows[-1]
    if len(row) < 21:
        raise ParseError(f"bonnie++ CSV line is truncated ({len(row)} fields, need 21)")
    values: dict[str, float] = {}
    unmeasured: list[str] = []
    for prefix, (ri, ci, kib) in BONNIE_FIELDS.items():
        rate, cpu = row[ri].strip(), row[ci].strip()
        if not rate:
            continue                        # the test was not run (-f skips per-char)
        if rate.startswith("+"):
            unmeasured.append(prefix)
            continue
        try:
            rate_v = float(rate)
            cpu_v = float(cpu)
        except ValueError as exc:
            raise ParseError(f"bonnie++ CSV field {ri} or {ci} is not a number: "
                             f"{rate!r}, {cpu!r}") from exc
        if prefix == "seeks":
            values["seeks_per_s"] = rate_v
            values["seeks_cpu_pct"] = cpu_v
        else:
            values[f"{prefix}_mb_s"] = rate_v * 1024 / MB if kib else rate_v
            values[f"{prefix}_cpu_pct"] = cpu_v
    if not values and not unmeasured:
        raise ParseError("bonnie++ CSV line holds no test results")
    return BonnieResult(values, unmeasured)


# ======================================================================================
# The benchmarks
# ======================================================================================

@dataclass
class _Trial:
    workdir: str = ""           # ours, removed after the trial
    target: str = ""            # where the measured file goes
    extra: list[str] = field(default_factory=list)      # extra command-line arguments
    cleanup: list[list[str]] = field(default_factory=list)  # run in reverse order
    warnings: list[tuple[str, str]] = field(default_factory=list)


def _last_line(text: str) -> str:
    return (text.strip().splitlines() or ["(no output)"])[-1]


class DiskBenchmark(Benchmark):
    """Shared life cycle: a private work directory in scratch_dir, the cache policy, the
    measured command, cleanup whatever happened, the physical-limit check."""

    family = "disk"
    output: str = "stdout"          # the stream parse() reads
    needs_workdir: bool = True

    # -- hooks ---------------------------------------------------------------------------
    def workdir(self, env) -> str:
        return posixpath.join(env.scratch_dir(), f"virtbench-{self.name}")

    def prepare(self, env, params: dict[str, Any], trial: _Trial) -> None:
        """Steps before the measured pass (raise TrialFailed to fail the trial)."""

    def command(self, params: dict[str, Any], trial: _Trial) -> list[str]:
        raise NotImplementedError

    def warm_command(self, params: dict[str, Any], trial: _Trial) -> list[str]:
        return self.command(params, trial)

    def limit_path(self, env, trial: _Trial) -> str:
        """Where the physical-limit check looks for the device under test."""
        return trial.workdir

    def extra_warnings(self, text: str) -> list[tuple[str, str]]:
        return []

    # -- Benchmark API ---------------------------------------------------------------------
    def argv(self, params, env):
        """The measured command as it would run in `env` (no side effects)."""
        trial = _Trial(workdir=self.workdir(env) if self.needs_workdir else "")
        trial.target = trial.workdir
        return self.command(params, trial)

    def check(self, params):
        if "cache" in params and params["cache"] not in CACHES:
            raise VirtbenchError(f"benchmark {self.name}: cache={params['cache']} is not valid; "
                                 f"use one of: {', '.join(CACHES)}")

    def _exec(self, env, argv: list[str], timeout: float):
        return env.exec(argv, timeout=timeout, env=C_LOCALE)

    def _step(self, env, argv: list[str], what: str, timeout: float = 120) -> str:
        res = self._exec(env, argv, timeout)
        if res.timed_out or res.exit != 0:
            raise TrialFailed(f"{what} failed (exit {res.exit}): {_last_line(res.stderr or res.stdout)}")
        return res.stdout

    def run_trial(self, env, params) -> TrialOutcome:
        outcome = TrialOutcome()
        trial = _Trial()
        timeout = self.timeout(params)
        try:
            try:
                if self.needs_workdir:
                    trial.workdir = trial.target = self.workdir(env)
                    self._step(env, ["sh", "-c", 'rm -rf "$1" && mkdir -p "$1"', "sh",
                                     trial.workdir], "creating the work directory")
                self.prepare(env, params, trial)
                if params.get("cache") == "in":
                    warm = self._exec(env, self.warm_command(params, trial), timeout)
                    if warm.timed_out or warm.exit != 0:
                        raise TrialFailed(f"warm pass failed (exit {warm.exit}): "
                                          f"{_last_line(warm.stderr)}")
                else:
                    env.drop_caches()
                argv = self.command(params, trial)
                result = self._exec(env, argv, timeout)
            except VirtbenchError as exc:     # e.g. the environment has no scratch disk
                raise TrialFailed(str(exc)) from exc
            outcome.stdout, outcome.stderr = result.stdout, result.stderr
            outcome.exit, outcome.wall_s = result.exit, result.wall_s
            text = result.stderr if self.output == "stderr" else result.stdout
            outcome.error = exec_error(result, timeout)
            if outcome.error is None:
                try:
                    outcome.values = self.parse(text)
                except ParseError as exc:
                    outcome.error = f"unparsable output: {exc}"
            if outcome.ok:
                trial.warnings += self.extra_warnings(text)
                trial.warnings += self._limit_warnings(env, params, trial, outcome.values)
        except TrialFailed as exc:
            outcome.error = str(exc)
        finally:
            self._cleanup(env, trial)
        outcome.warnings = trial.warnings
        return outcome

    def _cleanup(self, env, trial: _Trial) -> None:
        steps = list(reversed(trial.cleanup))
        if trial.workdir:
            steps.append(["rm", "-rf", trial.workdir])
        for argv in steps:
            try:
                res = self._exec(env, argv, 300)
            except AgentError:
                return          # the agent is gone; the runner restarts the environment
            if res.exit != 0:
                trial.warnings.append(("cleanup", f"{' '.join(argv)} failed: "
                                                  f"{_last_line(res.stderr)}"))

    def _limit_warnings(self, env, params, trial: _Trial, values: dict[str, float]):
        """At most one physical-limit warning per environment and benchmark (see
        physical_limit): a virtual disk on any bus is bounded by the host device behind it."""
        rates = {m.name: values[m.name] for m in self.metrics
                 if m.unit == "MB/s" and m.name in values}

        def guest_facts():
            res = self._exec(env, ["sh", "-c", DEVICE_FACTS_SCRIPT, "sh",
                                   self.limit_path(env, trial)], 60)
            return parse_device_facts(res.stdout)

        try:
            return LIMITS.check(env, self.name, rates, params.get("cache", "out"), guest_facts)
        except (OSError, subprocess.SubprocessError, VirtbenchError):
            return []


class DdWrite(DiskBenchmark):
    name = "dd-write"
    description = ("dd sequential write, bs=1M: conv=fdatasync (RIKEN 2012, 1 GB), or the "
                   "Xen 2006 form: bs=1M count=32 on a file system mounted -o sync")
    metrics = (Metric("write_mb_s", "MB/s", True,
                      "bytes written / dd's elapsed seconds (10^6 B/s); form=sync-mount: on a "
                      "file system mounted -o sync (a loop-mounted ext4 image on native; "
                      "oflag=sync instead, with a warning, where it cannot mount)"),)
    tools = ("dd",)
    output = "stderr"
    # size_mb=0: the form's own size (fdatasync: 1024 as RIKEN 2012; sync-mount: 32 as Xen 2006)
    # direct: oflag=direct with cache=out; RIKEN's dd had none (direct=false: buffered writes,
    # conv=fdatasync flushes them before dd stops its clock)
    defaults = {"size_mb": 0, "form": "fdatasync", "cache": "out", "direct": True}
    quick = {"size_mb": 32}
    FORMS = ("fdatasync", "sync-mount")

    def check(self, params):
        super().check(params)
        if params["form"] not in self.FORMS:
            raise VirtbenchError(f"benchmark dd-write: form={params['form']} is not valid; "
                                 f"use one of: {', '.join(self.FORMS)}")
        if params["size_mb"] < 0:
            raise VirtbenchError("benchmark dd-write: size_mb must be >= 0 (0: the form's size)")

    def size(self, params) -> int:
        if params["size_mb"]:
            return params["size_mb"]
        return 1024 if params["form"] == "fdatasync" else 32

    def timeout(self, params):
        return 300.0 + self.size(params) * 2.0   # 0.5 MB/s is still a result

    def command(self, params, trial):
        argv = ["dd", "if=/dev/zero", f"of={trial.target}/dd.dat", "bs=1M",
                f"count={self.size(params)}"]
        if params["form"] == "fdatasync":
            argv.append("conv=notrunc,fdatasync" if params["cache"] == "in" else "conv=fdatasync")
            if params["cache"] == "out" and params["direct"]:
                argv.append("oflag=direct")
        else:
            if params["cache"] == "in":
                argv.append("conv=notrunc")
        return argv + trial.extra

    def prepare(self, env, params, trial):
        if params["form"] != "sync-mount":
            return
        # A guest's scratch file system is ours: remount it -o sync for the trial and back.
        # The host's file systems are not ours: loop-mount an ext4 image inside scratch_dir.
        if env.owns_scratch_filesystem():
            out = self._step(env, ["findmnt", "-n", "-o", "TARGET", "-T", trial.workdir],
                             "finding the scratch mount")
            mountpoint = out.strip().splitlines()[0] if out.strip() else "/"
            if mountpoint != "/":
                self._step(env, ["mount", "-o", "remount,sync", mountpoint], "remount -o sync")
                trial.cleanup.append(["mount", "-o", "remount,async", mountpoint])
                opts = self._step(env, ["findmnt", "-n", "-o", "OPTIONS", mountpoint],
                                  "checking the mount options")
                if "sync" not in opts.strip().split(","):
                    raise TrialFailed(f"{mountpoint} is not mounted sync after remount: {opts.strip()}")
                return
        image, mnt = f"{trial.workdir}/sync.img", f"{trial.workdir}/mnt"
        script = ('set -e; truncate -s "$3"M "$1"; mkfs.ext4 -q -F "$1"; mkdir -p "$2"; '
                  'mount -o loop,sync "$1" "$2"')
        res = self._exec(env, ["sh", "-c", script, "sh", image, mnt,
                               str(self.size(params) + 96)], 120)
        if res.exit == 0:
            trial.target = mnt
            trial.cleanup.append(["umount", mnt])
            return
        trial.warnings.append((
            "method", "dd-write form=sync-mount: could not loop-mount an ext4 image -o sync "
            f"({_last_line(res.stderr)}); measured with oflag=sync on the scratch file system "
            "instead (synchronous data writes, but not the study's sync mount)"))
        trial.extra = ["oflag=sync"]

    def parse(self, stdout):
        """dd's stderr (its summary line) -> write_mb_s."""
        return {"write_mb_s": parse_dd(stdout)["mb_s"]}


class HdparmRead(DiskBenchmark):
    name = "hdparm-read"
    description = "hdparm -t: buffered sequential reads of the device under test (RIKEN 2012)"
    metrics = (Metric("read_mb_s", "MB/s", True,
                      "hdparm -t's rate (printed in MiB/s, stored in 10^6 B/s)"),)
    tools = ("hdparm",)
    needs_workdir = False
    defaults = {"direct": False, "cache": "out"}
    quick: dict[str, Any] = {}

    def timeout(self, params):
        return 300.0

    def _device(self, env) -> str:
        dev = env.scratch_device()
        if dev is None:
            raise TrialFailed(f"environment {env.label} has no block device under test "
                              "(scratch_device() is None); hdparm-read needs one")
        return dev

    def prepare(self, env, params, trial):
        trial.target = self._device(env)

    def argv(self, params, env):
        return ["hdparm", "-t"] + (["--direct"] if params["direct"] else []) + \
            [env.scratch_device() or "<no scratch device>"]

    def command(self, params, trial):
        return ["hdparm", "-t"] + (["--direct"] if params["direct"] else []) + [trial.target]

    def limit_path(self, env, trial):
        return trial.target

    def parse(self, stdout):
        return parse_hdparm(stdout)


def _fio_base(directory: str, filename: str, size_mb: int) -> list[str]:
    return ["fio", "--output-format=json", f"--directory={directory}",
            f"--filename={filename}", f"--size={size_mb}M"]


class IorRw(DiskBenchmark):
    name = "ior-rw"
    description = ("IOR-style write then read of one file kept between phases "
                   "(RIKEN 2012: ior -w -r -k), as two stonewalled fio jobs")
    metrics = (Metric("write_mb_s", "MB/s", True, "fio write phase, bw_bytes (10^6 B/s)"),
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
        return _fio_base(trial.target, "ior.dat", params["size_mb"]) + [
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


class Bonnie(DiskBenchmark):
    name = "bonnie"
    description = ("bonnie++ block write, rewrite, block read (and random seeks) with %CPU "
                   "(Zhang et al.; CNAF 2009); per-char tests skipped unless per_char")
    metrics = tuple(
        [Metric(f"{p}_mb_s", "MB/s", True, f"bonnie++ {p.replace('_', ' ')} (K/sec -> 10^6 B/s)")
         for p in ("block_write", "rewrite", "block_read")]
        + [Metric(f"{p}_cpu_pct", "%", False, f"bonnie++ %CPU during {p.replace('_', ' ')}")
           for p in ("block_write", "rewrite", "block_read")]
        + [Metric("seeks_per_s", "seeks/s", True, "bonnie++ random seeks"),
           Metric("char_write_mb_s", "MB/s", True, "bonnie++ per-char write (per_char=true)"),
           Metric("char_read_mb_s", "MB/s", True, "bonnie++ per-char read (per_char=true)"),
           Metric("char_write_cpu_pct", "%", False, "bonnie++ %CPU, per-char write"),
           Metric("char_read_cpu_pct", "%", False, "bonnie++ %CPU, per-char read")])
    tools = ("bonnie++",)
    # ram_mb=0: size_mb/2 (bonnie++ wants the file at least twice RAM; with cache=out and
    # direct the bulk tests use O_DIRECT (-D), so the page cache cannot hold them anyway).
    # size_mb=0: bonnie++'s own default, as the seed studies ran it: a file twice the
    # environment's RAM (ram_mb, if given, stands for the RAM). direct=false: no -D.
    defaults = {"size_mb": 2048, "ram_mb": 0, "cache": "out", "per_char": False, "direct": True}
    quick = {"size_mb": 256}

    def check(self, params):
        super().check(params)
        if params["size_mb"] == 1 or params["size_mb"] < 0 or params["ram_mb"] < 0:
            raise VirtbenchError("benchmark bonnie: need size_mb >= 2 (or 0: twice the RAM, "
                                 "bonnie++'s default), ram_mb >= 0")

    def timeout(self, params):
        size = params["size_mb"] or 64 * 1024     # twice the RAM: allow for a large guest
        return 900.0 + size * (3.0 if params["per_char"] else 1.0)

    def command(self, params, trial):
        argv = ["bonnie++", "-d", trial.target]
        if params["size_mb"]:
            ram = params["ram_mb"] or max(1, params["size_mb"] // 2)
            argv += ["-s", str(params["size_mb"]), "-r", str(ram)]
        elif params["ram_mb"]:
            argv += ["-r", str(params["ram_mb"])]
        argv += ["-n", "0", "-u", "root", "-q", "-m", "virtbench"]
        if not params["per_char"]:
            argv.append("-f")
        if params["cache"] == "out" and params["direct"]:
            argv.append("-D")
        return argv

    def parse(self, stdout):
        result = parse_bonnie(stdout)
        if not result.values:
            raise ParseError("bonnie++ printed +++++ for every test it ran: each finished too "
                             "fast to time; use a larger size_mb")
        return result.values

    def extra_warnings(self, text):
        try:
            unmeasured = parse_bonnie(text).unmeasured
        except ParseError:
            return []
        return [("unmeasured", f"bonnie++ printed +++++ for {', '.join(unmeasured)}: the test "
                               "finished too fast to time; use a larger size_mb")] if unmeasured else []


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
        [Metric(f"{job}_mb_s", "MB/s", True, f"fio job {job}: bw_bytes (10^6 B/s, as CDM)")
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
        argv = _fio_base(trial.target, "cdm.dat", params["size_mb"]) + [
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


DISK_BENCHMARKS = (DdWrite, HdparmRead, IorRw, Bonnie, Cdm)
