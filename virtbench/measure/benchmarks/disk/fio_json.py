"""Pure parser of fio's --output-format=json, per fio version, with failed runs refused.

virtbench reads fio 2.2 to 3.x (real output of 2.2.10 = Ubuntu 16.04, 3.1 = Ubuntu 18.04 and
Debian 12's 3.33 is in tests/fixtures/disk). What changes between them, from stat.c
(show_ddir_status_json) and backend.c at each tag of github:axboe/fio:

- "fio version" is "fio-X.Y[...]" in all of them; another version is refused in one line.
- bw_bytes (B/s) exists from fio-3.2 (commit aedd021d); before it only bw, in KiB/s, truncated
  to an integer: the rate is bw x 1024 there.
- io_bytes is in KiB up to fio-2.20 and in bytes from fio-2.21 (commit c12d597a, which added
  io_kbytes).
- "global options" and "job options" (what the command line asked) are in the JSON from
  fio-2.3; fio-2.2 has none.

A failed run is refused with its reason, never read as a result:
- fio interrupted by a signal prints "fio: terminating on signal N" on stdout before its JSON
  (all of these versions), and the JSON then holds jobs cut short;
- a job with error != 0 (e.g. 28, ENOSPC) failed;
- a job that did less than asked: neither its size (io >= size - one block) nor its runtime
  (>= 99 % of runtime=) was reached. This needs the options in the JSON, so on fio 2.2 only
  the two checks above apply.
"""
from __future__ import annotations

import errno
import json
import os
import re

from ..base import ParseError

MB = 1_000_000
READS = ((2, 2), (3, None))             # fio 2.2 and later 2.x, any 3.x
BW_BYTES = (3, 2)
IO_BYTES_IN_BYTES = (2, 21)
_VERSION = re.compile(r"^fio-(\d+)\.(\d+)")
_SIGNAL = re.compile(r"^fio: terminating on signal (\d+)", re.M)
_SIZE = re.compile(r"^(\d+)([kmgtp]?)(?:i?b)?$", re.I)
_TIME = re.compile(r"^(\d+)(us|ms|s|m|h|d)?$", re.I)
_TIME_UNIT = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def _version(doc: dict) -> tuple[str, tuple[int, int]]:
    text = doc.get("fio version")
    m = _VERSION.match(text) if isinstance(text, str) else None
    if not m:
        raise ParseError(f"fio JSON names no version virtbench knows (fio version={text!r}); "
                         "virtbench reads fio-2.2 to fio-3.x")
    version = (int(m.group(1)), int(m.group(2)))
    if not (version >= READS[0] and version[0] <= READS[1][0]):
        raise ParseError(f"fio JSON from {text} is not one virtbench reads (fio-2.2 to fio-3.x)")
    return text, version


def fio_json(stdout: str) -> dict:
    """fio's --output-format=json document, skipping any lines fio printed before it
    (notes and warnings such as 'note: both iodepth >= 1 and synchronous I/O engine...');
    ParseError if fio was interrupted or the JSON is not from a version virtbench reads."""
    signal = _SIGNAL.search(stdout)
    if signal:
        seen = re.search(r'"fio version"\s*:\s*"([^"]+)"', stdout)
        raise ParseError(f"{seen.group(1) if seen else 'fio'} was interrupted (terminating on "
                         f"signal {signal.group(1)}): its jobs ran shorter than asked")
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
            _version(doc)
            return doc
    raise ParseError("no JSON document in fio's output")


def _size_bytes(text) -> int | None:
    """fio's size syntax with its default kb_base=1024 ("64M", "1024k", "4096"), or None."""
    m = _SIZE.match(str(text).strip()) if text is not None else None
    if not m:
        return None
    return int(m.group(1)) * 1024 ** " kmgtp".index((m.group(2) or " ").lower())


def _seconds(text) -> float | None:
    """fio's time syntax (seconds by default: "600", "30s", "1m"), or None."""
    m = _TIME.match(str(text).strip()) if text is not None else None
    if not m:
        return None
    return int(m.group(1)) * _TIME_UNIT[(m.group(2) or "s").lower()]


def io_bytes(job: dict, direction: str, version: tuple[int, int]) -> float:
    value = float(job[direction]["io_bytes"])
    return value if version >= IO_BYTES_IN_BYTES else value * 1024


def _short(doc: dict, job: dict, direction: str, version: tuple[int, int]) -> str | None:
    """Why a job did less than its options asked, or None (also when the JSON holds none)."""
    opts = {**(doc.get("global options") or {}), **(job.get("job options") or {})}
    size, runtime = _size_bytes(opts.get("size")), _seconds(opts.get("runtime"))
    if size is None and runtime is None:
        return None
    done, ms = io_bytes(job, direction, version), float(job[direction].get("runtime", 0))
    if runtime is not None and ms >= 0.99 * runtime * 1000:
        return None
    block = _size_bytes(opts.get("bs")) or 4096
    if size is not None and done >= size - block:
        return None
    return (f"job {job.get('jobname')} stopped short: {done:.0f} of "
            f"{opts.get('size', '?')} bytes in {ms / 1000:g} s of runtime={opts.get('runtime', '?')}")


def fio_jobs(stdout: str) -> dict[str, dict]:
    """jobname -> job, failing on an interrupted run, a failed job or a job cut short."""
    doc = fio_json(stdout)
    text, version = _version(doc)
    jobs: dict[str, dict] = {}
    for job in doc["jobs"]:
        name = job.get("jobname")
        if not isinstance(name, str):
            raise ParseError("a fio job without a jobname")
        if job.get("error"):
            code = int(job["error"])
            raise ParseError(f"{text}: job {name} failed with error {code} "
                             f"({errno.errorcode.get(code, '?')}: {os.strerror(code)})")
        for direction in ("read", "write"):
            part = job.get(direction)
            if not isinstance(part, dict) or not float(part.get("io_bytes") or 0) > 0:
                continue
            if version >= BW_BYTES and "bw_bytes" not in part:
                raise ParseError(f"{text}: job {name} has no {direction}.bw_bytes")
            why = _short(doc, job, direction, version)
            if why:
                raise ParseError(f"{text}: {why}")
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
    """MB/s (10^6) of one direction of a job: bw_bytes (fio >= 3.2), else bw (KiB/s) x 1024."""
    if isinstance(job.get(direction), dict) and "bw_bytes" in job[direction]:
        return _fio_number(job, direction, "bw_bytes") / MB
    return _fio_number(job, direction, "bw") * 1024 / MB


def fio_iops(job: dict, direction: str) -> float:
    return _fio_number(job, direction, "iops")
