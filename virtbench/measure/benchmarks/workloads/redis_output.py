"""redis-benchmark 7.0's report of one test, read (pure).

virtbench runs redis-benchmark in its default format (no `--csv`), which holds in one run
everything a trial needs: the requests completed, the latency by percentile, the
cumulative distribution of latencies (the histogram `omitted_estimate` reads) and the
summary (throughput; avg, min, p50, p95, p99, max in ms). `--csv` prints the summary's
figures only, without the histogram, so it is refused here.

redis-benchmark prints the summary only when every request was answered: a run interrupted
(SIGINT, SIGKILL) or whose server went away prints its progress lines only (and 7.0.15 does
not exit by itself when its server is gone or refuses it: the trial's timeout ends it). Such
output is a ParseError in one line, never a figure.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..base import ParseError

SECTION = re.compile(r"^====== (.+?) ======$", re.M)
COMPLETED = re.compile(r"^\s*(\d+) requests completed in ([\d.]+) seconds$", re.M)
CUMULATIVE = re.compile(r"^Cumulative distribution of latencies:$", re.M)
BUCKET = re.compile(r"^\s*([\d.]+)% <= ([\d.]+) milliseconds \(cumulative count (\d+)\)$")
THROUGHPUT = re.compile(r"^\s*throughput summary: ([\d.]+) requests per second$", re.M)
LATENCY_HEAD = re.compile(r"^\s*latency summary \(msec\):\s*\n\s*(.+)\n\s*(.+)$", re.M)
PROGRESS = re.compile(r"(\S+): rps=[\d.]+ \(overall: ([\d.]+)\)")


@dataclass(frozen=True)
class RedisReport:
    """One test's figures: its name, requests, throughput, latency summary (column ->
    ms) and histogram ((upper latency ms, requests) pairs, as `omitted_estimate` takes)."""
    test: str
    requests: int
    ops_per_s: float
    latency_ms: dict[str, float]
    histogram: list[tuple[float, int]]


def lines_of(stdout: str) -> str:
    """The output with its progress lines' carriage returns as line ends (pure)."""
    return stdout.replace("\r\n", "\n").replace("\r", "\n")


def not_finished(text: str) -> ParseError:
    """Why output without a test section holds no result, in one line."""
    stripped = text.strip()
    if stripped.startswith('"test","rps"'):
        return ParseError("redis-benchmark --csv output: it has no latency histogram; "
                          "virtbench runs redis-benchmark in its default format")
    if stripped.startswith("Invalid option"):
        return ParseError(f"redis-benchmark refused its arguments: {stripped.splitlines()[0]}")
    progress = PROGRESS.findall(text)
    if progress:
        test, overall = progress[-1]
        return ParseError(f"redis-benchmark did not finish (interrupted, killed, or its server "
                          f"gone): no summary; its last progress line said {test} "
                          f"{float(overall):,.0f} requests/s so far")
    return ParseError("no redis-benchmark report in the output (no '====== TEST ======' "
                      "section): it did not run, or did not reach its server")


def histogram_of(body: str, requests: int) -> list[tuple[float, int]]:
    """The cumulative distribution of latencies as (upper latency ms, requests) pairs;
    ParseError unless it is there and its counts add up to `requests`."""
    found = CUMULATIVE.search(body)
    if not found:
        raise ParseError("no 'Cumulative distribution of latencies' in redis-benchmark's "
                         "report (run without --csv and without -q)")
    pairs, last = [], 0
    for line in body[found.end():].lstrip("\n").splitlines():
        bucket = BUCKET.match(line)
        if not bucket:
            break
        upper, count = float(bucket.group(2)), int(bucket.group(3))
        if count < last:
            raise ParseError("redis-benchmark's cumulative latency counts go down")
        if count > last:
            pairs.append((upper, count - last))
        last = count
    if last != requests:
        raise ParseError(f"redis-benchmark's latency histogram counts {last} requests of the "
                         f"{requests} it says completed")
    return pairs


def latency_summary(body: str) -> dict[str, float]:
    """The summary's latency columns (avg, min, p50, p95, p99, max) in ms."""
    found = LATENCY_HEAD.search(body)
    if not found:
        raise ParseError("no 'latency summary (msec)' in redis-benchmark's report")
    names, values = found.group(1).split(), found.group(2).split()
    if len(names) != len(values):
        raise ParseError("redis-benchmark's latency summary has "
                         f"{len(values)} figures for {len(names)} columns")
    try:
        figures = {n: float(v) for n, v in zip(names, values)}
    except ValueError:
        raise ParseError(f"redis-benchmark's latency summary is not numbers: "
                         f"{found.group(2).strip()}") from None
    for need in ("p50", "p99"):
        value = figures.get(need)
        if value is None or not math.isfinite(value) or value < 0:
            raise ParseError(f"redis-benchmark's latency summary lacks a {need} figure")
    if figures["p50"] > figures["p99"]:
        raise ParseError("redis-benchmark's latency summary has p50 above p99")
    return figures


def read_redis_benchmark(stdout: str) -> RedisReport:
    """The one test redis-benchmark ran, from its default-format output (pure)."""
    text = lines_of(stdout)
    sections = SECTION.findall(text)
    if not sections:
        raise not_finished(text)
    if len(sections) > 1:
        raise ParseError(f"redis-benchmark ran {len(sections)} tests ({', '.join(sections)}); "
                         "virtbench runs one per trial")
    body = text[SECTION.search(text).end():]
    completed = COMPLETED.search(body)
    throughput = THROUGHPUT.search(body)
    if not completed or not throughput:
        raise ParseError(f"redis-benchmark's {sections[0]} report has no "
                         f"{'requests completed' if not completed else 'throughput summary'} "
                         "line: the run did not finish")
    requests, ops = int(completed.group(1)), float(throughput.group(1))
    if requests <= 0 or not math.isfinite(ops) or ops <= 0:
        raise ParseError(f"redis-benchmark reports {requests} requests at {ops} requests/s")
    return RedisReport(test=sections[0], requests=requests, ops_per_s=ops,
                       latency_ms=latency_summary(body), histogram=histogram_of(body, requests))


def parse_redis_benchmark(stdout: str) -> dict[str, float]:
    """ops_per_s, p50_ms and p99_ms of the one test redis-benchmark ran (pure)."""
    report = read_redis_benchmark(stdout)
    return {"ops_per_s": report.ops_per_s, "p50_ms": report.latency_ms["p50"],
            "p99_ms": report.latency_ms["p99"]}
