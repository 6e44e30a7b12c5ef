"""The threshold band and the p of a decision's band claim.

The band is the threshold T % on the metric's own scale: ratio = env / reference must lie in
[1 - T/100, 1 + T/100], on the log scale (log(1 - T), log(1 + T)).

The band claim's p (`p_band`): a decision claims where the ratio lies against the band, and
that claim has its own p, used by the family-wise correction (stats.multiplicity): with the
estimate inside the band, the TOST p max(p_low, p_high) of "inside" (< alpha exactly when
the (1 - 2 alpha) interval lies inside); beyond an edge, twice the one-sided p of "beyond
that edge" (< alpha exactly when the (1 - alpha) interval lies beyond it). Paired: from the
t statistic of the log ratios; sequential: from the confidence sequences' Bayes factors at
the edges; unpaired: the share of bootstrap ratios on the wrong side of the edge.
"""
from __future__ import annotations

from math import log, sqrt

import numpy as np
from scipy import stats as sps


def band(threshold_pct: float) -> tuple[float, float]:
    """The threshold band on the log-ratio scale: (log(1 - T), log(1 + T))."""
    t = threshold_pct / 100
    if not 0 < t < 1:
        raise ValueError(f"threshold {threshold_pct!r} %: use a value between 0 and 100")
    return log(1 - t), log(1 + t)


def band_p_from_sides(m: float, p_inside, p_beyond, threshold_pct: float) -> float:
    """p_band (module docstring) from `p_inside(edge, above)`, the p that the mean lies
    above (True) or below (False) `edge` as the equivalence interval reads it, and
    `p_beyond(edge, above)`, the same as the (1 - alpha) interval reads it."""
    b_lo, b_hi = band(threshold_pct)
    if b_lo < m < b_hi:
        return float(max(p_inside(b_lo, True), p_inside(b_hi, False)))
    return float(min(1.0, p_beyond(b_hi, True) if m >= b_hi else p_beyond(b_lo, False)))


def _doubled(p_one_sided):
    return lambda edge, above: 2 * p_one_sided(edge, above)


def band_p_t(d, threshold_pct: float) -> float | None:
    """p_band of paired log ratios d from their one-sample t statistic; None below 2."""
    d = np.asarray(d, dtype=float)
    n = d.size
    if n < 2:
        return None
    m, s = float(d.mean()), float(d.std(ddof=1))

    def p_at(edge, above):
        if s == 0:
            return 0.0 if (m > edge if above else m < edge) else 1.0
        t = (m - edge) / (s / sqrt(n))
        return float(sps.t.sf(t if above else -t, n - 1))
    return band_p_from_sides(m, p_at, _doubled(p_at), threshold_pct)
