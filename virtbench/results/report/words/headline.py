"""The headline in words: a row against its reference ("1.84× slower? undecided (≥ 5 blocks
would decide) [1.30, 2.59]", "within ±10 %: equivalent") and an environment's summary over
its benchmarks; the change itself is said by change.py's rule. Pure: analysis/headline.py
computes the figures and calls these for HeadlineItem.words and HeadlineSummary.words.

A pass says the band instead of a change ("within ±10 %: equivalent"); a difference within
the band says so after the change; an inconclusive row keeps its change and says it is
undecided, with the blocks that would decide; every row but a pass ends with its (1 -
alpha) interval in the change's form.
"""
from __future__ import annotations

from ....core.decisions import Decided
from .change import Said, factor, is_worse


def item_slowdown(it) -> float:
    """A HeadlineItem's factor back as a slowdown (> 1 worse, < 1 better)."""
    return it.factor if is_worse(it.direction) else 1.0 / it.factor


def item_words(verdict: Decided, said: Said, threshold_pct: float,
               trials_needed: int | None = None, span: str = "") -> str:
    """One row of the headline: its change (`said`), what its decision says of it, and its
    interval `span` (Said.interval)."""
    band = f"±{threshold_pct:g} %"
    change = said.sentence()
    if verdict == Decided.PASS:
        return f"within {band}: equivalent"
    if verdict == Decided.DIFFERS:
        words = f"{change} (a real difference, within {band})"
    elif verdict == Decided.INCONCLUSIVE:
        words = f"{change}? undecided" + (f" (≥ {trials_needed} blocks would decide)"
                                          if trials_needed else "")
    else:
        words = change
    return f"{words} {span}" if span else words


def summary_words(said: Said, benchmarks: int, rows: int, undecided: int,
                  all_pass_within: float | None = None) -> str:
    """An environment over its benchmarks: the geometric mean of its slowdowns (`said`, as
    a time: change.py rule 6); when every row passes, that first ("equivalent within ±10 %
    on every metric of 3 benchmarks")."""
    over = f"{benchmarks} benchmark{'s' if benchmarks != 1 else ''}"
    change = said.sentence()
    if all_pass_within is not None:
        return (f"equivalent within ±{all_pass_within:g} % on every metric of {over} "
                f"(geometric mean {change})")
    words = f"{change} (geometric mean over {over})"
    if undecided:
        words += f"; {undecided} of {rows} metrics undecided"
    return words


def _zero(s: Said) -> bool:
    return s.times is None and s.overhead is not None and round(s.overhead, 1) == 0


def span_words(least: Said, most: Said) -> str:
    """The range of several rows' changes, from the least slowdown to the most: "1.53× to
    1.90× slower", "1.2 % to 9.2 % slower", "1.2 % faster to 9.2 % slower"."""
    one_side = least.worse == most.worse or _zero(least) or _zero(most)
    if one_side and (least.times is None) == (most.times is None):
        side = most if _zero(least) else least
        a, b = (least, most) if side.worse else (most, least)      # the smaller first
        if a.times is not None:
            return f"{factor(a.times)}× to {factor(b.times)}× {side.word}"
        return f"{abs(a.overhead):.1f} % to {abs(b.overhead):.1f} % {side.word}"
    return f"{least.sentence()} to {most.sentence()}"
