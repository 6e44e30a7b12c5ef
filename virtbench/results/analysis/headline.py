"""The headline: each environment against its reference in the words people use ("41.7×
slower", "1.07× faster", "within ±10 %: equivalent"), then one summary per environment over
the benchmarks. Pure.

The factor. A row's ratio is env / reference on the metric's own scale (VsReference.ratio).
Its slowdown is the ratio when lower is better (seconds) and 1 / ratio when higher is better
(MB/s), so that a slowdown above 1 is always worse; the factor said is the slowdown when it
is at least 1 ("41.7× slower") and 1 / slowdown when it is below ("1.07× faster"). The
interval is the ratio's (1 - alpha) interval mapped the same way (ratio_ci_low/high).

The words. Time and rate metrics (a unit in s, ms, µs, ns, or per second, IOPS, FLOPS) are
slower / faster; any other metric (MiB, %, counts) worse / better. A pass says the band
instead of a factor ("within ±10 %: equivalent"); an inconclusive row keeps its factor and
says it is undecided.

The summary (one line per environment): the geometric mean of the slowdowns, first over each
benchmark's metrics, then over the benchmarks (each benchmark weighs the same, however many
metrics it has), as PTS and SPEC summarise; with the benchmarks and rows it covers, and how
many rows are undecided. When every row passes it says so first ("equivalent within ±10 %
on every metric of 3 benchmarks"), the mean after it. Rows with no ratio (a failed side, a
value of 0) are left out and counted.
"""
from __future__ import annotations

import math
from collections import defaultdict

from ...foundations.model import Headline, HeadlineItem, HeadlineSummary, Result
from ...foundations.stats.decision import DIFFERS, FAIL, INCONCLUSIVE, PASS

SPEED_UNITS = {"s", "ms", "µs", "us", "ns", "seconds", "s/gib", "iops", "mflops", "gflops",
               "flops"}
# the overhead a table keeps saying in % below it; from it on, the factor ("beyond ±50 % say
# the factor": -50 % is 2× faster)
PCT_LIMIT = 50.0


def is_speed(unit: str) -> bool:
    """Time or rate: said as slower / faster."""
    u = (unit or "").strip().lower()
    return u in SPEED_UNITS or "/s" in u


def slowdown(ratio: float | None, higher_is_better: bool) -> float | None:
    """How many times worse than the reference (> 1 worse, < 1 better); None without a ratio."""
    if ratio is None or not ratio > 0 or math.isinf(ratio):
        return None
    return 1.0 / ratio if higher_is_better else ratio


def direction_words(unit: str) -> tuple[str, str]:
    """(worse, better) for a metric of this unit."""
    return ("slower", "faster") if is_speed(unit) else ("worse", "better")


def factor(x: float) -> str:
    """A factor with three significant digits: 1.07, 17.6, 41.7, 123."""
    if round(x, 1) >= 100:
        return f"{x:.0f}"
    return f"{x:.1f}" if round(x, 2) >= 10 else f"{x:.2f}"


def factor_words(slow: float, unit: str = "s") -> tuple[float, str, str]:
    """(the factor, its direction word, the words): 41.7, "slower", "41.7× slower"."""
    worse, better = direction_words(unit)
    if slow >= 1.0:
        return slow, worse, f"{factor(slow)}× {worse}"
    return 1.0 / slow, better, f"{factor(1.0 / slow)}× {better}"


def interval_words(low: float | None, high: float | None) -> str:
    """A factor's interval as "[38.1, 45.0]", or ""."""
    if low is None or high is None:
        return ""
    return f"[{factor(low)}, {factor(high)}]"


def factor_interval(vs, higher_is_better: bool, direction_is_worse: bool
                    ) -> tuple[float | None, float | None]:
    """The ratio's interval as factors in the direction said (low <= high)."""
    ends = [slowdown(x, higher_is_better) for x in (vs.ratio_ci_low, vs.ratio_ci_high)]
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
    slow = slowdown(vs.ratio, result.higher_is_better)
    if slow is None:
        return None
    size, direction, words = factor_words(slow, result.unit)
    low, high = factor_interval(vs, result.higher_is_better, slow >= 1.0)
    band = f"±{vs.threshold_pct:g} %"
    if vs.verdict == PASS:
        said = f"within {band}: equivalent"
    elif vs.verdict == DIFFERS:
        said = f"{words} (a real difference, within {band})"
    elif vs.verdict == INCONCLUSIVE:
        said = f"{words}? undecided" + (f" (≥ {vs.trials_needed} blocks would decide)"
                                         if vs.trials_needed else "")
    else:
        said = words
    span = interval_words(low, high)
    if span and vs.verdict in (FAIL, DIFFERS, INCONCLUSIVE):
        said += f" {span}"
    return HeadlineItem(benchmark=result.benchmark, metric=result.metric, unit=result.unit,
                        ratio=vs.ratio, factor=size, direction=direction,
                        factor_low=low, factor_high=high, verdict=vs.verdict, words=said)


def is_worse(direction: str) -> bool:
    return direction in ("slower", "worse")


def item_slowdown(it: HeadlineItem) -> float:
    """An item's factor back as a slowdown (> 1 worse, < 1 better)."""
    return it.factor if is_worse(it.direction) else 1.0 / it.factor


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
        speeds.add(is_speed(it.unit))
    mean = geometric_mean([geometric_mean(v) for v in by_bench.values()])
    size, direction, words = factor_words(mean, "s" if speeds == {True} else "")
    n = len(by_bench)
    over = f"{n} benchmark{'s' if n != 1 else ''}"
    verdicts = [it.verdict for it in items]
    if all(v == PASS for v in verdicts):
        said = f"equivalent within ±{results[0].vs_baseline.threshold_pct:g} % on every " \
               f"metric of {over} (geometric mean {words})"
    else:
        said = f"{words} (geometric mean over {over})"
        undecided = verdicts.count(INCONCLUSIVE)
        if undecided:
            said += f"; {undecided} of {len(items)} metrics undecided"
    return HeadlineSummary(factor=size, direction=direction, benchmarks=n,
                           rows=len(items), left_out=len(results) - len(items), words=said)


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
