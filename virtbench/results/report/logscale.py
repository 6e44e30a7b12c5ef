"""The geometry of a ratio chart: a log axis centred on 1 (the reference), symmetric so that
"2× worse" and "2× better" sit as far from 1 on either side, its ticks, the ±threshold band
and the room left for each bar's label. Pure; the charts (ratios.py) use it, plotly draws.

Positions on the axis are log10 of the slowdown (words/change.py: > 1 worse, < 1
better), which is what plotly's log axis takes for its range and its annotations (bars,
shapes and error bars take the values themselves).
"""
from __future__ import annotations

import math

# the coarse ladder (1/100, 1/10, 1/2, 1, 2, 10, 100, ...) and, for a narrow range, the fine
# one; reciprocals are added on the better side
COARSE = (2.0, 10.0, 100.0, 1000.0, 10000.0)
FINE = (1.05, 1.1, 1.25, 1.5, 2.0)
# the narrowest axis: 1.25× either side, so that a ±10 % band does not fill the chart
MIN_HALF_WIDTH = math.log10(1.25)
# the share of each half of the axis kept free beyond the data for the bars' labels
LABEL_ROOM = 0.3


def position(x: float) -> float:
    """Where a slowdown sits on the axis: log10(x); 1 is the centre (0)."""
    if not x > 0 or math.isinf(x):
        raise ValueError(f"a ratio on a log axis must be positive and finite, not {x!r}")
    return math.log10(x)


def fraction(x: float, half_width: float) -> float:
    """Where a slowdown sits across an axis of that half width: 0 the left edge, 0.5 the
    reference, 1 the right edge (clipped)."""
    return min(1.0, max(0.0, 0.5 + position(x) / (2 * half_width)))


def band(threshold_pct: float) -> tuple[float, float]:
    """The ±threshold band on the ratio: [1 - T/100, 1 + T/100]."""
    if not 0 < threshold_pct < 100:
        raise ValueError(f"a threshold must be in (0, 100) %, not {threshold_pct!r}")
    return 1.0 - threshold_pct / 100.0, 1.0 + threshold_pct / 100.0


def half_width(values: list[float], threshold_pct: float | None = None,
               label_room: float = LABEL_ROOM) -> float:
    """The axis' half width in log10 units: the farthest value (or band edge) from 1, then
    widened so that `label_room` of each half stays free for labels; at least 1.25×."""
    reach = [abs(position(v)) for v in values if v is not None and v > 0 and not math.isinf(v)]
    if threshold_pct is not None:
        reach += [abs(position(e)) for e in band(threshold_pct)]
    far = max(reach, default=0.0)
    return max(MIN_HALF_WIDTH, far / (1.0 - label_room))


def ticks(half: float) -> list[float]:
    """The ticks inside ±half (log10 units): 1 always; 2, 10, 100... and their reciprocals
    as far as the range reaches (5 too when 10 is beyond it); under 5×, the widest three
    of the fine ladder (1.05, 1.1, 1.25, 1.5, 2) that fit."""
    if half < position(5.0) - 1e-12:
        # the widest three of 1.05, 1.1, 1.25, 1.5, 2 that fit
        ups = [x for x in FINE if position(x) <= half + 1e-12][-3:]
    else:
        ups = [x for x in COARSE if position(x) <= half + 1e-12]
        if position(10.0) > half + 1e-12:
            ups.append(5.0)         # 1/2 .. 2 alone says little of a range up to 9×
    return sorted([1.0 / x for x in ups] + [1.0] + ups)


def tick_text(x: float) -> str:
    """A tick as people write it: "1", "2", "10", "1/2", "1/10", "1.25", "1/1.25"."""
    if x >= 1:
        return f"{x:g}"
    return f"1/{1.0 / x:.6g}"


def bar_span(slow: float) -> tuple[float, float]:
    """A bar from the reference (1) to the slowdown: (base, length) as plotly draws a bar on
    a log axis (from base to base + length; the length is negative on the better side)."""
    position(slow)
    return 1.0, slow - 1.0


def whisker(slow: float, low: float | None, high: float | None) -> tuple[float, float]:
    """The interval as an error bar's (minus, plus) lengths around the slowdown; (0, 0)
    without one. The ends may come in either order (a higher-is-better metric's ratio
    interval turns over when it becomes a slowdown)."""
    if low is None or high is None:
        return 0.0, 0.0
    lo, hi = min(low, high), max(low, high)
    return max(0.0, slow - lo), max(0.0, hi - slow)


def label_anchor(slow: float, low: float | None, high: float | None) -> tuple[float, str]:
    """Where a bar's label goes: just beyond the far end of its bar or whisker, on the
    bar's side of 1; (axis position, plotly xanchor)."""
    ends = [slow] + [x for x in (low, high) if x is not None and x > 0]
    if slow >= 1.0:
        return position(max(ends)), "left"
    return position(min(ends)), "right"
