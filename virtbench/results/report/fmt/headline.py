"""The headline as lines: each environment's summary against its reference, then its
benchmarks, a benchmark with several metrics in one line (their range, words/headline.py).
Pure."""
from __future__ import annotations

from itertools import groupby

from ....core.decisions import Decided
from ....foundations.model import HeadlineItem, RunReport
from ..words import change
from ..words.change import Said
from ..words.headline import item_slowdown, span_words

TITLE = "headline"


def benchmark_line(bench: str, items: list[tuple[HeadlineItem, Said]]) -> str:
    """`himeno · mflops: 41.7× slower [38.5, 45.5]`, or for several metrics `stream: 16.2× to
    18.6× slower (4 metrics)`; a pass of every metric `stream: within ±10 %: equivalent (4
    metrics)`. Each item with its change as the rule says it (`Said`)."""
    items = list(items)
    if len(items) == 1:
        it = items[0][0]
        return f"{bench} · {it.metric}: {it.words}"
    if len({it.words for it, _ in items}) == 1:
        return f"{bench}: {items[0][0].words} ({len(items)} metrics)"
    if len({(s.sentence(), it.verdict) for it, s in items}) == 1:
        return f"{bench}: {items[0][1].sentence()} ({len(items)} metrics)"
    ordered = sorted(items, key=lambda pair: item_slowdown(pair[0]))
    span = span_words(ordered[0][1], ordered[-1][1])
    undecided = sum(1 for it, _ in items if it.verdict == Decided.INCONCLUSIVE)
    tail = f"; {undecided} undecided" if undecided else ""
    return f"{bench}: {span} ({len(items)} metrics{tail})"


def lines(report: RunReport) -> list[str]:
    """Per environment: `LABEL against REF: SUMMARY`, then one indented line per benchmark."""
    results = {(r.environment, r.benchmark, r.metric): r for r in report.results}
    out = []
    for h in report.headline:
        if h.summary is None:
            continue
        out.append(f"{h.environment} against {h.reference or 'its reference'}: "
                   f"{h.summary.words}")
        for bench, items in groupby(h.items, key=lambda it: it.benchmark):
            out.append("  " + benchmark_line(bench, [
                (it, said_of(it, results.get((h.environment, it.benchmark, it.metric))))
                for it in items]))
    return out


def said_of(it: HeadlineItem, result) -> Said:
    """A headline item's change as the rule says it, in its row's direction (read as a time
    when the report lacks the row: words/change.py rule 6)."""
    return change.said(it.ratio, result.higher_is_better if result is not None else False,
                       it.unit)
