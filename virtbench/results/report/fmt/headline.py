"""The headline as lines: each environment's summary against its reference, then its
benchmarks, a benchmark with several metrics in one line (their range). Pure."""
from __future__ import annotations

from itertools import groupby

from ...analysis.headline import factor, is_worse, item_slowdown
from ....foundations.model import RunReport

TITLE = "headline"


def benchmark_line(bench: str, items) -> str:
    """`himeno: 41.7× slower [38.5, 45.5]`, or for several metrics `stream: 16.2× to 18.6×
    slower (4 metrics)`; a pass of every metric `stream: within ±10 %: equivalent (4
    metrics)`."""
    items = list(items)
    if len(items) == 1:
        it = items[0]
        return f"{bench} · {it.metric}: {it.words}"
    words = {it.words for it in items}
    if len(words) == 1:
        return f"{bench}: {items[0].words} ({len(items)} metrics)"
    if len({(factor(it.factor), it.direction, it.verdict) for it in items}) == 1:
        return f"{bench}: {factor(items[0].factor)}× {items[0].direction} ({len(items)} metrics)"
    slow = sorted(items, key=item_slowdown)
    lo, hi = slow[0], slow[-1]
    if lo.direction == hi.direction:
        a, b = (lo, hi) if is_worse(lo.direction) else (hi, lo)
        span = f"{factor(a.factor)}× to {factor(b.factor)}× {a.direction}"
    else:
        span = f"{factor(lo.factor)}× {lo.direction} to {factor(hi.factor)}× {hi.direction}"
    undecided = sum(1 for it in items if it.verdict == "inconclusive")
    tail = f"; {undecided} undecided" if undecided else ""
    return f"{bench}: {span} ({len(items)} metrics{tail})"


def lines(report: RunReport) -> list[str]:
    """Per environment: `LABEL against REF: SUMMARY`, then one indented line per benchmark."""
    out = []
    for h in report.headline:
        if h.summary is None:
            continue
        out.append(f"{h.environment} against {h.reference or 'its reference'}: "
                   f"{h.summary.words}")
        for bench, items in groupby(h.items, key=lambda it: it.benchmark):
            out.append("  " + benchmark_line(bench, items))
    return out
