"""The headline's figures: each environment against its reference as a factor, then one
summary per environment over the benchmarks; its words are the report layer's
(virtbench/results/report/words/headline.py, the change said by words/change.py's rule).
Pure.

The factor. A row's ratio is env / reference on the metric's own scale (VsReference.ratio).
Its slowdown is the ratio when lower is better (seconds) and 1 / ratio when higher is better
(MB/s), so that a slowdown above 1 is always worse; the factor is the slowdown when it is
at least 1 (direction "slower") and 1 / slowdown when it is below ("faster"). Its interval
is the ratio's (1 - alpha) interval mapped the same way (ratio_ci_low/high). Time and rate
metrics are slower / faster, any other worse / better.

The summary (one per environment): the geometric mean of the slowdowns, first over each
benchmark's metrics, then over the benchmarks (each benchmark weighs the same, however many
metrics it has), as PTS and SPEC summarise; with the benchmarks and rows it covers, and how
many rows are undecided. Rows with no ratio (a failed side, a value of 0) are left out and
counted.
"""
from __future__ import annotations

import math
from collections import defaultdict

from ...core.decisions import Decided
from ...foundations.model import Headline, HeadlineItem, HeadlineSummary, Result
from ..report.words import change
from ..report.words.headline import item_slowdown, item_words, summary_words


def factor_interval(vs, higher_is_better: bool, direction_is_worse: bool
                    ) -> tuple[float | None, float | None]:
    """The ratio's interval as factors in the direction said (low <= high)."""
    ends = [change.slowdown(x, higher_is_better) for x in (vs.ratio_ci_low, vs.ratio_ci_high)]
    if None in ends:
        return None, None
    if not direction_is_worse:
        ends = [1.0 / e for e in ends]
    return min(ends), max(ends)


def item(result: Result) -> HeadlineItem | None:
    """One row's headline, or None when it has no comparison or no ratio."""
    vs = result.vs_baseline
    if vs is None:
        return None
    hib = result.higher_is_better
    slow = change.slowdown(vs.ratio, hib)
    if slow is None:
        return None
    worse_word, better_word = change.direction_words(result.unit)
    size, direction = (slow, worse_word) if slow >= 1.0 else (1.0 / slow, better_word)
    low, high = factor_interval(vs, hib, slow >= 1.0)
    said = change.said(vs.ratio, hib, result.unit)
    span = said.interval(*change.ratio_interval(vs, hib), hib, sentence=True)
    return HeadlineItem(benchmark=result.benchmark, metric=result.metric, unit=result.unit,
                        ratio=vs.ratio, factor=size, direction=direction,
                        factor_low=low, factor_high=high, verdict=vs.verdict,
                        words=item_words(vs.verdict, said, vs.threshold_pct, vs.trials_needed,
                                         span))


def geometric_mean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def summary(items: list[HeadlineItem], results: list[Result]) -> HeadlineSummary | None:
    """The geometric mean of the items' slowdowns, per benchmark first, then over benchmarks."""
    if not items:
        return None
    by_bench: dict[str, list[float]] = defaultdict(list)
    speeds = set()
    for it in items:
        by_bench[it.benchmark].append(item_slowdown(it))
        speeds.add(change.is_speed(it.unit))
    mean = geometric_mean([geometric_mean(v) for v in by_bench.values()])
    worse_word, better_word = change.direction_words("s" if speeds == {True} else "")
    size, direction = (mean, worse_word) if mean >= 1.0 else (1.0 / mean, better_word)
    said = change.said_slowdown(mean, "s" if speeds == {True} else "")
    passed = all(it.verdict == Decided.PASS for it in items)
    words = summary_words(said, len(by_bench), len(items),
                          sum(1 for it in items if it.verdict == Decided.INCONCLUSIVE),
                          results[0].vs_baseline.threshold_pct if passed else None)
    return HeadlineSummary(factor=size, direction=direction, benchmarks=len(by_bench),
                           rows=len(items), left_out=len(results) - len(items), words=words)


def headlines(results: list[Result], labels: list[str]) -> list[Headline]:
    """One headline per environment with comparisons, in the run's environment order."""
    out = []
    for label in labels:
        mine = [r for r in results if r.environment == label and r.vs_baseline is not None]
        if not mine:
            continue
        items = [i for i in (item(r) for r in mine) if i is not None]
        refs = sorted({r.vs_baseline.reference for r in mine if r.vs_baseline.reference})
        out.append(Headline(environment=label, reference=", ".join(refs) or None,
                            summary=summary(items, mine), items=items))
    return out
