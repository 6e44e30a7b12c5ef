"""Numbers as text: values, percentages, intervals, p-values, ratios."""
from __future__ import annotations

import math


def value(x: float | None) -> str:
    """Four significant digits, no exponent for ordinary magnitudes."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    ax = abs(x)
    if ax >= 1e6 or (ax < 1e-3 and ax != 0):
        return f"{x:.3e}"
    if ax >= 1000:
        return f"{x:,.0f}"
    return f"{x:.4g}"


def pct(x: float | None, signed: bool = True) -> str:
    if x is None:
        return "n/a"
    return f"{x:+.1f} %" if signed else f"{x:.1f} %"


def ci(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "n/a"
    return f"[{value(low)}, {value(high)}]"


def p(x: float | None) -> str:
    if x is None:
        return "n/a"
    return "<0.001" if x < 0.001 else f"{x:.3f}"


def ratio(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"

