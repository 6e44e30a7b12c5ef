"""What interleaved pairs say of a harness's cost (pure), for bench/workload_harness_*.py.

Each pair is (by hand, through virtbench): the same tool with the same arguments, run
directly and as one virtbench trial, in an order that alternates. The figures: the medians,
the pairs' ratios (virtbench / by hand), their geometric mean with its 95 % t interval from
the log ratios, and what that interval says of the target (issue 39: within 3 % either way):
"within 3 %" when it lies inside 0.97..1.03, "outside 3 %" when it lies wholly beyond either
end, else "undecided" (too few pairs for this host's noise), with the pairs that would
decide at the observed spread.
"""
from __future__ import annotations

import math
import statistics

from scipy import stats

TARGET = 0.03


def summarize(pairs: list[tuple[float, float]]) -> dict:
    """(by hand, virtbench) per pair -> the figures the benches print."""
    hand = [h for h, _ in pairs]
    harness = [v for _, v in pairs]
    ratios = [v / h for h, v in pairs]
    logs = [math.log(r) for r in ratios]
    mean = statistics.fmean(logs)
    low = high = None
    if len(logs) > 1:
        half = stats.t.ppf(0.975, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
        low, high = round(math.exp(mean - half), 4), round(math.exp(mean + half), 4)
    return {"pairs": len(pairs),
            "median_by_hand": round(statistics.median(hand), 1),
            "median_virtbench": round(statistics.median(harness), 1),
            "ratio_of_medians": round(statistics.median(harness) / statistics.median(hand), 4),
            "geometric_mean_ratio": round(math.exp(mean), 4),
            "ci95_low": low, "ci95_high": high,
            "verdict": verdict(low, high),
            "pairs_to_decide": pairs_to_decide(logs),
            "pair_ratios": [round(r, 4) for r in ratios]}


def verdict(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "undecided"
    if low >= 1 - TARGET and high <= 1 + TARGET:
        return "within 3 %"
    if high < 1 - TARGET or low > 1 + TARGET:
        return "outside 3 %"
    return "undecided"


def pairs_to_decide(logs: list[float]) -> int | None:
    """Pairs at which the 95 % interval around a ratio of 1 would be narrower than ±3 %, at
    the observed spread of the log ratios (None with one pair)."""
    if len(logs) < 2:
        return None
    s = statistics.stdev(logs)
    for n in range(2, 100_000):
        if stats.t.ppf(0.975, n - 1) * s / math.sqrt(n) < math.log(1 + TARGET):
            return n
    return None
