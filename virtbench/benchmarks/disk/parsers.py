"""Pure parsers of dd, hdparm, fio and bonnie++ output (MB/s here is 10^6 bytes/s;
hdparm's MiB and bonnie++'s KiB are converted)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..base import ParseError

MB = 1_000_000
MIB = 1024 * 1024

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
