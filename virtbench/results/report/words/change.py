"""How a change is said: one rule for every format and every place that says one (the
headline, the verdict matrix, the per-benchmark tables' overhead, interval and published
columns, compare's tables, the ratio charts' labels). The JSON report keeps the numbers
(overhead_pct, ratio, factor); this says them. Pure.

A change is a ratio r = a value / its reference's, on the metric's own scale, with the
metric's direction:
- its overhead o = (r - 1) x 100 when lower is better, (1 - r) x 100 when higher is better:
  positive = worse, whatever the metric's direction (the JSON's overhead_pct; the threshold
  band is ±T % of it);
- its slowdown s = r when lower is better, 1 / r when higher is better: above 1 is worse.

The rule:
1. Near 1 (1 / 1.5 < s < 1.5, FACTOR_FROM): the overhead in %, one decimal. In a table's
   cell signed, positive = worse as the column says ("+15.8 %", "-6.0 %"); in a sentence
   with its word ("15.8 % slower", "6.0 % faster"; one that rounds to 0.0 % is "the same to
   0.1 %", or "the same as the reference to 0.1 %").
2. From 1.5× on, either way: the factor, s when worse and 1 / s when better, with three
   significant digits (1.50, 17.6, 123) and its word: "37.5× slower", "2.10× faster", in a
   cell and in a sentence alike. A throughput's overhead cannot pass 100 %: 37.5× slower is
   +97.3 %, and 18× slower +94.4 %; the factor keeps them apart.
3. The word: slower / faster for a time or a rate (a unit in s, ms, µs, ns, per second,
   IOPS, FLOPS), worse / better for any other metric (MiB, %, counts).
4. No ratio (none, 0 or below, not finite): the overhead when it is known, as rule 1 says
   it; else "n/a".
5. An interval is said in its point's form: overheads, low first ("[+1.2, +2.4]" in a
   cell, "[+1.2 %, +2.4 %]" in a sentence), or factors in the point's direction, low first
   ("[38.1, 45.0]").
6. A slowdown with no metric of its own (the headline's summary: the geometric mean of the
   slowdowns over benchmarks) is read as a time: r = s.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ....foundations.stats.ratio import overhead_pct

FACTOR_FROM = 1.5
SPEED_UNITS = {"s", "ms", "µs", "us", "ns", "seconds", "s/gib", "iops", "mflops", "gflops",
               "flops"}
NO_VALUE = "n/a"


def is_speed(unit: str) -> bool:
    """Time or rate: said as slower / faster (rule 3)."""
    u = (unit or "").strip().lower()
    return u in SPEED_UNITS or "/s" in u


def direction_words(unit: str) -> tuple[str, str]:
    """(worse, better) for a metric of this unit (rule 3)."""
    return ("slower", "faster") if is_speed(unit) else ("worse", "better")


def is_worse(word: str) -> bool:
    """Whether a direction word (rule 3) says worse."""
    return word in (direction_words("s")[0], direction_words("")[0])


def slowdown(ratio: float | None, higher_is_better: bool) -> float | None:
    """How many times worse than the reference (> 1 worse, < 1 better); None without a
    ratio (rule 4)."""
    if ratio is None or not ratio > 0 or math.isinf(ratio):
        return None
    return 1.0 / ratio if higher_is_better else ratio


def ratio_of(overhead: float | None, higher_is_better: bool) -> float | None:
    """The ratio an overhead % is of (the inverse of overhead_pct)."""
    if overhead is None or not math.isfinite(overhead):
        return None
    return 1.0 - overhead / 100.0 if higher_is_better else 1.0 + overhead / 100.0


def factor(x: float) -> str:
    """A factor with three significant digits: 1.07, 17.6, 41.7, 123."""
    if round(x, 1) >= 100:
        return f"{x:.0f}"
    return f"{x:.1f}" if round(x, 2) >= 10 else f"{x:.2f}"


def pct_cell(x: float | None) -> str:
    """An overhead in a cell: signed, one decimal (rule 1)."""
    return NO_VALUE if x is None or not math.isfinite(x) else f"{x:+.1f} %"


@dataclass(frozen=True)
class Said:
    """A change as the rule reads it: a factor (>= 1, in the direction `worse`) or an
    overhead %, and the metric's words for its sides."""
    overhead: float | None           # % on the metric's own scale, positive = worse
    times: float | None              # the factor (>= 1) when said as one, else None
    worse: bool                      # which side of its reference it lies on
    words: tuple[str, str]           # (worse, better) for its unit

    @property
    def word(self) -> str:
        return self.words[0] if self.worse else self.words[1]

    def cell(self) -> str:
        """In a table's cell: "+15.8 %" or "37.5× slower"."""
        if self.times is not None:
            return f"{factor(self.times)}× {self.word}"
        return pct_cell(self.overhead)

    def sentence(self, than: str = "") -> str:
        """In a sentence: "15.8 % slower" or "37.5× slower" (`than`: "... than the
        reference")."""
        tail = f" than {than}" if than else ""
        if self.times is not None:
            return f"{factor(self.times)}× {self.word}{tail}"
        if self.overhead is None or not math.isfinite(self.overhead):
            return NO_VALUE
        if round(self.overhead, 1) == 0:
            return f"the same as {than} to 0.1 %" if than else "the same to 0.1 %"
        return f"{abs(self.overhead):.1f} % {self.word}{tail}"

    def interval(self, low: float | None, high: float | None, higher_is_better: bool,
                 sentence: bool = False) -> str:
        """An interval of the ratio (`low`, `high`) said in this point's form (rule 5); ""
        without one."""
        ends = [slowdown(x, higher_is_better) for x in (low, high)]
        if None in ends:
            return ""
        if self.times is None:
            unit = " %" if sentence else ""
            lo, hi = sorted(overhead_pct(x, higher_is_better) for x in (low, high))
            return f"[{lo:+.1f}{unit}, {hi:+.1f}{unit}]"
        ends = sorted(e if self.worse else 1.0 / e for e in ends)
        return f"[{factor(ends[0])}, {factor(ends[1])}]"


def said(ratio: float | None, higher_is_better: bool, unit: str,
         overhead: float | None = None) -> Said:
    """How the rule says a ratio of this metric; `overhead` stands in when there is no
    ratio (rule 4)."""
    words = direction_words(unit)
    slow = slowdown(ratio, higher_is_better)
    if slow is None:
        known = overhead is not None and math.isfinite(overhead)
        return Said(overhead if known else None, None, known and overhead > 0, words)
    over = overhead_pct(ratio, higher_is_better)
    worse = slow >= 1.0
    if 1.0 / FACTOR_FROM < slow < FACTOR_FROM:
        return Said(over, None, over > 0 if over != 0 else worse, words)
    return Said(over, slow if worse else 1.0 / slow, worse, words)


def ratio_interval(vs, higher_is_better: bool) -> tuple[float | None, float | None]:
    """A comparison's (1 - alpha) interval of its ratio (VsReference: ratio_ci_low/high; a
    CompareRow, or a report without them: from its overhead interval ci_low/high)."""
    low, high = getattr(vs, "ratio_ci_low", None), getattr(vs, "ratio_ci_high", None)
    if low is not None and high is not None:
        return low, high
    return ratio_of(vs.ci_low, higher_is_better), ratio_of(vs.ci_high, higher_is_better)


def said_slowdown(slow: float, unit: str) -> Said:
    """A slowdown with no metric of its own, read as a time (rule 6)."""
    return said(slow, False, unit)


def cell(ratio: float | None, higher_is_better: bool, unit: str,
         overhead: float | None = None) -> str:
    """A change in a table's cell (rules 1, 2, 4)."""
    return said(ratio, higher_is_better, unit, overhead).cell()


def sentence(ratio: float | None, higher_is_better: bool, unit: str,
             overhead: float | None = None, than: str = "") -> str:
    """A change in a sentence (rules 1, 2, 4), "... than `than`" when given."""
    return said(ratio, higher_is_better, unit, overhead).sentence(than)
