"""Pure parsers of dd, hdparm and bonnie++ output (MB/s here is 10^6 bytes/s; hdparm's MiB and
bonnie++'s KiB are converted); fio's JSON is read by fio_json, re-exported here."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..base import ParseError
from .fio_json import fio_iops, fio_jobs, fio_json, fio_rate  # noqa: F401 (re-exported)

MB = 1_000_000
MIB = 1024 * 1024

# dd's summary line (stderr), per implementation:
# GNU coreutils >= 8.24 (src/dd.c print_xfer_stats):
#     "67108864 bytes (67 MB, 64 MiB) copied, 0.0476309 s, 1.4 GB/s"; small: "500 bytes copied, ..."
# GNU coreutils before 8.24:  "134217728 bytes (134 MB) copied, 0.220513 s, 609 MB/s"
# BusyBox with FEATURE_DD_THIRD_STATUS_LINE (coreutils/dd.c dd_output_status; Alpine's):
#     "33554432 bytes (32.0MB) copied, 0.010095 seconds, 3.1GB/s"
#     Debian's busybox is built without it: records in/out only, nothing to time.
# BSD (FreeBSD/macOS bin/dd/misc.c summary(); old GNU coreutils 5.x printed it with "seconds"):
#     "33554432 bytes transferred in 17.615797 secs (1904792 bytes/sec)"
_DD_GNU = re.compile(r"^(\d+) bytes?(?: \([^)]*\))? copied, ([0-9.]+(?:e[-+]?\d+)?) s, "
                     r"([0-9.]+) ([kMGT]?i?B/s)\s*$")
_DD_BUSYBOX = re.compile(r"^(\d+) bytes \([0-9.]+[kMGT]?B\) copied, ([0-9.]+) seconds, "
                         r"[0-9.]+[kMGT]?B/s\s*$")
_DD_BSD = re.compile(r"^(\d+) bytes transferred in ([0-9.]+) secs?(?:onds)? \((\d+) bytes/sec\)")
_DD_RECORDS = re.compile(r"^\d+\+\d+ records out$", re.M)


def parse_dd(stderr: str) -> dict[str, float]:
    """dd's summary line -> {"bytes", "seconds", "mb_s"}; MB/s computed from bytes/seconds
    (dd's own figure is rounded to 2-3 digits and its unit varies).

    Reads GNU coreutils dd (5.x, 6.0-8.23, 8.24 and later), BusyBox dd built with its status
    line, and BSD dd; a dd that prints no summary (Debian's BusyBox) is refused in one line."""
    found = None
    for line in stderr.splitlines():
        line = line.strip()
        m = _DD_GNU.match(line) or _DD_BUSYBOX.match(line) or _DD_BSD.match(line)
        if m:
            found = m
    if found is None:
        if _DD_RECORDS.search(stderr):
            raise ParseError("dd printed its record counts but no bytes/seconds summary (BusyBox "
                             "dd built without FEATURE_DD_THIRD_STATUS_LINE, as Debian's): it "
                             "cannot be timed; install GNU coreutils dd in the environment")
        raise ParseError("no dd summary line (GNU coreutils, BusyBox or BSD dd's "
                         "'N bytes ... copied/transferred ... s')")
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


# bonnie++ -q prints one CSV line (bon_time.cpp, BonTimer::DoReportIO). Its first field is the
# CSV format version, its second bonnie++'s. The I/O results start at a position that depends
# on the format (github:ng-alt/bonnie's imports of 1.96 and 1.97.3, Debian's 2.00a source):
# 1.96 and 1.97: format, version, name, concurrency, seed, file size, chunk size, then putc
#   (1.96's header line omits concurrency and seed, but its writer prints them);
# 1.98 (bonnie++ 1.98 to 2.00a): the same, then seeks and seek processes, then putc.
# From putc: putc + %CPU, block write, rewrite, getc, block read (K/sec + %CPU each), random
# seeks (/sec + %CPU); then file tests and latencies. 1.03 and older print no format field.
BONNIE_FORMATS = {"1.96": (7, 48), "1.97": (7, 48), "1.98": (9, 50)}  # -> putc index, fields
BONNIE_FIELDS = {          # metric prefix -> (offset of the rate from putc, unit is K/sec)
    "char_write": (0, True),
    "block_write": (2, True),
    "rewrite": (4, True),
    "char_read": (6, True),
    "block_read": (8, True),
    "seeks": (10, False),
}
_BONNIE_FORMAT = re.compile(r"^\d+\.\d+[a-z]?$")


@dataclass
class BonnieResult:
    values: dict[str, float]
    unmeasured: list[str]       # tests bonnie++ ran but printed "+++++" for (too fast to time)


def _bonnie_row(stdout: str) -> tuple[list[str], int]:
    """The last CSV result line and the index of its putc field, or ParseError in one line."""
    known = ", ".join(BONNIE_FORMATS)
    rows = [line.strip().split(",") for line in stdout.splitlines() if line.count(",") >= 12]
    if not rows:
        raise ParseError(f"no bonnie++ CSV line (formats {known})")
    row = rows[-1]
    fmt = row[0].strip()
    if not _BONNIE_FORMAT.match(fmt):
        raise ParseError(f"bonnie++ CSV line without a format version (bonnie++ 1.03 or older?) "
                         f"is not one virtbench reads (formats {known})")
    if fmt not in BONNIE_FORMATS:
        raise ParseError(f"bonnie++ CSV format {fmt} (bonnie++ {row[1].strip()}) is not one "
                         f"virtbench reads (formats {known})")
    putc, fields = BONNIE_FORMATS[fmt]
    if len(row) != fields:
        raise ParseError(f"bonnie++ CSV line (format {fmt}) has {len(row)} fields, not {fields}: "
                         "truncated, or not that format's layout")
    return row, putc


def parse_bonnie(stdout: str) -> BonnieResult:
    """bonnie++ -q's CSV line -> MB/s (10^6; bonnie++ prints KiB/s) and %CPU per test.

    Reads CSV formats 1.96, 1.97 (bonnie++ 1.96, 1.97.x) and 1.98 (bonnie++ 1.98, 2.00, 2.00a);
    any other format is refused in one line."""
    row, putc = _bonnie_row(stdout)
    values: dict[str, float] = {}
    unmeasured: list[str] = []
    for prefix, (offset, kib) in BONNIE_FIELDS.items():
        ri, ci = putc + offset, putc + offset + 1
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
            raise ParseError(f"bonnie++ CSV (format {row[0].strip()}) field {ri} or {ci} is not "
                             f"a number: {rate!r}, {cpu!r}") from exc
        if prefix == "seeks":
            values["seeks_per_s"] = rate_v
            values["seeks_cpu_pct"] = cpu_v
        else:
            values[f"{prefix}_mb_s"] = rate_v * 1024 / MB if kib else rate_v
            values[f"{prefix}_cpu_pct"] = cpu_v
    if not values and not unmeasured:
        raise ParseError("bonnie++ CSV line holds no test results")
    return BonnieResult(values, unmeasured)
