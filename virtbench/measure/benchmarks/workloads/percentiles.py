"""Which latency percentiles a trial can support, stated as a rule (pure).

A percentile q of a trial's latencies is reported only when the trial had at least
`100 / (1 - q)` requests (100 beyond the quantile): p50 needs 200, p99 10,000, p99.9
100,000. With fewer, the figure rests on a handful of the slowest requests and moves with
each; the metric is left out and the reason said once per case (warning kind
`percentile_left_out`).

Every workload's latency is one of two loads, which its metrics' descriptions and each
trial's detail (`loop`) say:

- **open** (`loop="open"`): requests are sent on a schedule fixed in advance (pgbench
  `--rate`, an open-loop HTTP generator); a request's latency counts from when it was due,
  so time the server spent stalled is counted in every request it delayed.
- **closed** (`loop="closed"`): each client sends its next request when the last one is
  answered (redis-benchmark, wrk). When the server stalls, the clients wait too and send
  nothing: the requests that would have met the stall are never sent, and the percentiles
  leave them out (coordinated omission). Such percentiles describe the requests that were
  sent, not the users a stalled server would have kept waiting; `omitted_estimate` says how
  many requests a closed loop did not send, from the trial's latency histogram.
"""
from __future__ import annotations

from dataclasses import dataclass

def requests_needed(q: float) -> int:
    """The fewest requests a trial needs for its q-quantile (0 < q < 1): 100 / (1 - q)."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"quantile {q} is not in (0, 1)")
    return int(round(100.0 / (1.0 - q)))


def metric_name(q: float) -> str:
    """p50_ms, p99_ms, p99.9_ms: the contract's names of a latency percentile."""
    pct = f"{q * 100:.4f}".rstrip("0").rstrip(".")
    return f"p{pct}_ms"


def quantile_of(metric: str) -> float:
    """metric_name's inverse: p99_ms -> 0.99, p99.9_ms -> 0.999."""
    return float(metric.removeprefix("p").removesuffix("_ms")) / 100.0


@dataclass(frozen=True)
class Supported:
    """The percentiles a trial of `requests` requests keeps (metric name -> quantile), and
    one line for those it leaves out (None: none)."""
    kept: dict[str, float]
    left_out: str | None

    def warnings(self) -> list[tuple[str, str]]:
        """The trial's warning for the percentiles left out (TrialOutcome.warnings), or []."""
        return [("percentile_left_out", self.left_out)] if self.left_out else []


def supported(quantiles: tuple[float, ...], requests: int, what: str) -> Supported:
    """Split `quantiles` into those `requests` support and those it does not; `what` names
    the case in the line ("redis get, 2,000 requests")."""
    kept = {metric_name(q): q for q in quantiles if requests >= requests_needed(q)}
    lacking = [q for q in quantiles if requests < requests_needed(q)]
    if not lacking:
        return Supported(kept, None)
    names = ", ".join(metric_name(q) for q in lacking)
    most = max(requests_needed(q) for q in lacking)
    return Supported(kept, f"{what}: {names} left out: {requests:,} requests in a trial, and "
                           f"a percentile q needs 100/(1-q) ({most:,} for {metric_name(max(lacking))}); "
                           "give the trial more requests (a longer or faster run)")


def omitted_estimate(histogram: list[tuple[float, int]]) -> int:
    """Requests a closed loop did not send while its clients waited on slow answers, from the
    trial's latency histogram ((latency_ms, requests) pairs, as the tool prints them): an
    answer slower than twice the median kept its client from sending (latency / median - 1)
    requests it would have sent at the median pace (pure; 0 for an empty histogram)."""
    total = sum(n for _, n in histogram)
    if total <= 0:
        return 0
    ordered = sorted(histogram)
    seen, median = 0, ordered[-1][0]
    for latency, n in ordered:
        seen += n
        if seen * 2 >= total:
            median = latency
            break
    if median <= 0:
        return 0
    return int(sum(n * (lat / median - 1.0) for lat, n in ordered if lat > 2.0 * median))
