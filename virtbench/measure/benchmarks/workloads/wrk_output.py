"""What wrk 4.1 (Debian 12's) prints, read (pure), and the Lua script virtbench gives it.

wrk is a closed loop: each of its connections sends the next request when the last one is
answered. virtbench runs it with `--latency` and `-s` a script of its own, DONE_LUA, that
defines only `done()` (no `request()` or `response()`: wrk's hot path is the same as
without a script). After the run it prints two lines that hold wrk's figures exactly:

    virtbench-wrk requests=N duration_us=N bytes=N connect=N read=N write=N status=N timeout=N
    virtbench-wrk-latency min_us=N max_us=N p50_us=N p99_us=N counted=N

**wrk 4.1 corrects its latency histogram for coordinated omission** before it prints it
(src/wrk.c, stats_correct): with `expected` = the run's mean interval between a
connection's requests (run time / (requests / connections)), each recorded latency `n` of
at least 2 x expected adds requests at n - expected, n - 2 x expected, ... down to
expected, the ones that connection would have sent meanwhile at its mean pace
(HdrHistogram's correction). Its percentiles, `--latency`'s and `done()`'s, are those of the
corrected histogram. `counted` is that histogram's size (wrk's Lua API has no count of it:
the script finds it from the smallest latency's count k and the percentile p* at which
wrk's rank, round(p/100 x count + 0.5), passes k: count = 100 k / p*, by bisection);
`counted - requests` is wrk's own estimate of the requests the closed loop did not send.

A run is refused (ParseError, one line) when it lacks these lines or the summary (killed,
failed to start), ran shorter than it was asked (interrupted: wrk prints a full summary of
the part it ran after a SIGINT), had a non-2xx/3xx answer (wrk counts statuses > 399:
their throughput would be one of error pages) or a socket error (connect, read, write, or a
request slower than `--timeout`, which wrk leaves out of its latencies).
"""
from __future__ import annotations

import re

from ..base import ParseError

MARK = "virtbench-wrk"

DONE_LUA = r"""-- virtbench: wrk's own figures after the run, exactly (done() only: no per-request work)
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("virtbench-wrk requests=%d duration_us=%d bytes=%d connect=%d "
    .. "read=%d write=%d status=%d timeout=%d\n", summary.requests, summary.duration,
    summary.bytes, e.connect, e.read, e.write, e.status, e.timeout))
  if summary.requests == 0 then return end
  -- the corrected histogram's size: count = 100 k / p*, k the smallest latency's count,
  -- p* the percentile from which wrk's rank round(p/100 count + 0.5) passes k
  local min = latency.min
  local _, k = latency(1)
  local lo, hi = 0, 100
  for _ = 1, 200 do
    local mid = (lo + hi) / 2
    if mid <= lo or mid >= hi then break end
    if latency:percentile(mid) == min then lo = mid else hi = mid end
  end
  io.write(string.format("virtbench-wrk-latency min_us=%d max_us=%d p50_us=%d p99_us=%d "
    .. "counted=%d\n", min, latency.max, latency:percentile(50), latency:percentile(99),
    math.floor(100 * k / hi + 0.5)))
end
"""

_FIELDS = ("requests", "duration_us", "bytes", "connect", "read", "write", "status", "timeout")
_LATENCY = ("min_us", "max_us", "p50_us", "p99_us", "counted")
_SOCKET = ("connect", "read", "write", "timeout")


def _pairs(stdout: str, head: str, keys: tuple[str, ...]) -> dict[str, int] | None:
    """The `head k=v ...` line's values for `keys` (all of them), or None when absent."""
    for line in stdout.splitlines():
        if line.startswith(head + " "):
            found = dict(re.findall(r"(\w+)=(\d+)", line))
            if all(k in found for k in keys):
                return {k: int(found[k]) for k in keys}
            raise ParseError(f"wrk's {head} line lacks {', '.join(k for k in keys if k not in found)}")
    return None


def _asked_seconds(stdout: str) -> float:
    """The duration wrk was asked for, from its first line (`Running 5s test @ URL`)."""
    if not stdout.strip():
        raise ParseError("wrk printed nothing: it was killed before it finished, or did not "
                         "start (its message is on stderr)")
    m = re.search(r"^Running (\d+(?:\.\d+)?)([smh]) test @ ", stdout, re.M)
    if not m:
        raise ParseError("no 'Running ... test @' line: wrk did not start (a bad argument or "
                         "an unreachable address; its message is on stderr)")
    return float(m.group(1)) * {"s": 1, "m": 60, "h": 3600}[m.group(2)]


def parse_wrk(stdout: str) -> dict[str, float]:
    """wrk 4.1's output with DONE_LUA's lines -> requests_per_s, p50_ms, p99_ms and the run's
    counts (requests, seconds, corrected: the corrected histogram's size, omitted: what wrk's
    correction added). ParseError for a failed, interrupted or erroneous run."""
    asked = _asked_seconds(stdout)
    rate = re.search(r"^Requests/sec:\s+([0-9.]+)\s*$", stdout, re.M)
    run = _pairs(stdout, MARK, _FIELDS)
    if rate is None or run is None:
        raise ParseError("no 'Requests/sec:' summary and virtbench-wrk line: wrk did not "
                         "finish (killed, or its script failed)")
    seconds = run["duration_us"] / 1e6
    if seconds < asked:
        raise ParseError(f"wrk ran {seconds:.2f} s of the {asked:g} s asked: interrupted")
    if run["status"]:
        raise ParseError(f"{run['status']:,} of {run['requests']:,} answers were HTTP errors "
                         "(status > 399): the server did not serve the file")
    errors = {k: run[k] for k in _SOCKET if run[k]}
    if errors:
        said = ", ".join(f"{k} {v:,}" for k, v in errors.items())
        hint = " (a timeout is a request slower than --timeout)" if "timeout" in errors else ""
        raise ParseError(f"wrk had socket errors: {said}{hint}")
    if run["requests"] == 0:
        raise ParseError("wrk completed no request")
    lat = _pairs(stdout, MARK + "-latency", _LATENCY)
    if lat is None:
        raise ParseError("no virtbench-wrk-latency line: wrk's script did not finish")
    if lat["counted"] < run["requests"]:
        raise ParseError(f"wrk's latency histogram holds {lat['counted']:,} of "
                         f"{run['requests']:,} requests")
    return {"requests_per_s": float(rate.group(1)), "p50_ms": lat["p50_us"] / 1000.0,
            "p99_ms": lat["p99_us"] / 1000.0, "requests": float(run["requests"]),
            "seconds": seconds, "corrected": float(lat["counted"]),
            "omitted": float(lat["counted"] - run["requests"])}
