"""Changes in one series of runs: where its level moved, found where a fact changed and, where
none did, by a change-point search; each with its evidence. Pure: lists of numbers in, facts
out (virtbench/results/history builds the series from the store and words the result).

A series is one value per run, in run order (oldest first): a run's estimate of one metric
(the trimmed mean) or its paired ratio to the reference (the ratio series, which cancels the
host's drift). Everything below works on y = log(value); a value <= 0 has no logarithm and
leaves the series without detection (`NoLog`).

Specification.

Noise model. sigma, the series' own run-to-run noise on the log scale, is a trimmed scale of
successive differences d_i = y_i - y_(i-1): the largest TRIM share of |d| (at least one) left
out, sigma = sqrt(mean(kept d^2) / (2 E)), E = E[Z^2 | |Z| < c] for a standard normal Z and
c its quantile that leaves out that share (so that sigma is the noise's standard deviation
when the noise is normal). A step moves one difference and a spike two, which are the ones
left out, so neither inflates sigma; a slow drift adds a little to every difference. (The
MAD of the differences, tried first, is too erratic in a short series: with 7 runs it
often came out at half the noise, and the search then cried wolf.) Fewer than 3 runs: no sigma, no search. sigma is floored at
SIGMA_FLOOR (identical values would make any wobble infinitely significant). The series'
noise floor is exp(sigma) - 1, in %.

(a) Where a fact changed (`fact_points`: the indices i at which a fingerprint fact differs
from run i - 1). The runs are the unit: the runs before (back to the previous boundary: the
series' start, the previous fact point or a confirmed drift change) against the runs after
(up to the next boundary), a two-sample t on their log values with the pooled variance
(df = n_before + n_after - 2; the noise is assumed the same on both sides). The estimate is
the ratio of geometric means after / before; its (1 - alpha) and (1 - 2 alpha) t intervals
are read by the existing decision rule (stats.decision.classify: the threshold band), and
p (of "no change") and p_band (stats.band) go to the family's correction
(stats.multiplicity, over every fact point of every series tested together). The point's
status:
- "confirmed": the difference claim survives the correction (adjusted p < alpha), at least
  MIN_RUNS_AFTER runs follow it, and the two-runs rule holds: each of its first
  MIN_RUNS_AFTER runs lies past the midpoint between the medians of the runs before and
  after, and each of the last MIN_RUNS_AFTER runs before it on the other side (one run that
  moved and one that did not is a spike, never a change, nor is the return from one);
- "suspected": the difference survives but only one run follows: needs one more run;
- "no change": the band claim "inside +-threshold" survives (stats.decision's pass) and no
  difference does;
- "undecided": anything else (too few runs, a spike).
The decision's word (fail: beyond the threshold, differs: within it, inconclusive: the size
against the threshold undecided) says how large a confirmed change is.

(b) Where no fact changed (drift): within each stretch between fact points, PELT
(ruptures, l2 cost: a change of mean, min_size MIN_RUNS_AFTER, every index a candidate) on
y with the penalty PENALTY_C * log(n) * sigma^2 per change (n: the series' runs). PENALTY_C
was calibrated on simulated A/A series (bench/history_sim.py --calibrate; the rate does not
depend on the noise's size, the search working in units of the series' own sigma) so that
a 20-run series without any change shows a false confirmed change at most 5 % of the time
(measured: docs/history.md). A point the search finds is "confirmed" by the same two-runs
rule as (a); else it is dropped. A search cannot place a change before the last run
(min_size): the last run alone is "suspected" when it lies further from the median of its
segment than a one-run segment would need to pay the penalty,
|y_last - level| > sqrt(penalty * (m + 1) / m) (m: the runs of its segment before it).
A drift change's estimate and interval are computed as in (a) but its p is not (the search
chose the point: its p would not be one), so it takes no part in the family's correction.

Smallest change a series can see (`mde_pct`): at a fact change with MIN_RUNS_AFTER runs after
and the series' runs before it, the change the pooled t test detects with 80 % power at
alpha: (t_(1 - alpha/2, df) + z_0.8) * sigma * sqrt(1/n + 1/MIN_RUNS_AFTER), as % of the
level; the drift search's is sqrt(penalty * (n + 2) / (2 n)) (a step with 2 runs after it
that pays the penalty), both before the family's correction.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from math import ceil, exp, log, sqrt
from typing import Sequence

import numpy as np
from scipy import stats as sps

from .band import band_p_from_sides
from ...core.decisions import Decided, Direction
from .decision import (DEFAULT_ALPHA, DEFAULT_THRESHOLD_PCT, NO_INTERVAL, TARGET_POWER,
                       Decision, Evidence, Question, Reading, build, classify)
from ...core.defaults import CORRECTION
from .multiplicity import METHODS, adjust_family

SIGMA_FLOOR = 1e-4          # 0.01 %: below it, identical values
MIN_RUNS = 3                # runs a series needs for a noise estimate and a search
MIN_RUNS_AFTER = 2          # runs after a point that confirm it
TRIM = 0.2                  # the share of the largest successive differences the noise leaves out
# the drift search's penalty per change, in units of sigma^2 * log(n); calibrated by
# bench/history_sim.py (--calibrate) on A/A series of 20 runs: false confirmed changes <= 5 %
PENALTY_C = 6.0

CONFIRMED, SUSPECTED, NO_CHANGE, UNDECIDED = "confirmed", "suspected", "no change", "undecided"
STATUSES = (CONFIRMED, SUSPECTED, NO_CHANGE, UNDECIDED)
FACT, DRIFT = "fact", "drift"

RUNS = Reading("unpaired", "ratio of the geometric means of the runs after / before",
               "two-sample t (pooled variance) on the runs' log values",
               "runs after needed (not computed)")


@dataclass(frozen=True)
class NoLog:
    """A value <= 0 in the series: no logarithm, no detection."""
    index: int
    value: float


@dataclass(frozen=True)
class Noise:
    """The series' noise (module docstring): sigma on the log scale, and what it implies."""
    runs: int
    sigma: float | None
    floor_pct: float | None          # exp(sigma) - 1, %
    penalty: float | None            # the drift search's, per change (log units squared)
    mde_pct: float | None            # at a fact change, MIN_RUNS_AFTER runs after
    drift_mde_pct: float | None      # the drift search's, MIN_RUNS_AFTER runs after


@dataclass(frozen=True)
class Change:
    """A point where the level may have moved: run `index` is the first after it."""
    index: int
    kind: str                        # FACT | DRIFT
    status: str                      # STATUSES
    runs_before: int
    runs_after: int
    decision: Decision | None        # before/after (a): the test; (b): estimate, no p
    direction: Direction | None      # of the level after
    spike: bool = False              # one run moved, the next did not
    reason: str = ""                 # why undecided / suspected, in words


@dataclass(frozen=True)
class SeriesChanges:
    noise: Noise
    changes: tuple[Change, ...]
    no_log: NoLog | None = None


def noise_sigma(y: Sequence[float]) -> float | None:
    """sigma of the module docstring: the trimmed root mean square of successive
    differences, made consistent for normal noise."""
    y = np.asarray(y, dtype=float)
    if y.size < MIN_RUNS:
        return None
    d = np.sort(np.abs(np.diff(y)))
    m = d.size
    drop = max(1, ceil(TRIM * m))
    kept = d[:m - drop]
    f = drop / m                                   # the share of |d| left out
    c = sps.norm.ppf(1 - f / 2)
    e = 1 - 2 * c * sps.norm.pdf(c) / (2 * sps.norm.cdf(c) - 1)   # E[Z^2 | |Z| < c]
    return max(sqrt(float(np.mean(kept ** 2)) / (2 * e)), SIGMA_FLOOR)


def penalty(n: int, sigma: float) -> float:
    """The drift search's penalty per change for a series of n runs."""
    return PENALTY_C * log(max(n, MIN_RUNS)) * sigma ** 2


def mde_fact_pct(n_before: int, sigma: float | None, alpha: float = DEFAULT_ALPHA,
                 after: int = MIN_RUNS_AFTER, power: float = TARGET_POWER) -> float | None:
    """Smallest change (% of the level) the test of (a) detects with `power` (docstring)."""
    df = n_before + after - 2
    if sigma is None or n_before < 1 or df < 1:
        return None
    c = sps.t.ppf(1 - alpha / 2, df) + sps.norm.ppf(power)
    return (exp(c * sigma * sqrt(1 / n_before + 1 / after)) - 1) * 100


def mde_drift_pct(n: int, sigma: float | None) -> float | None:
    """Smallest step with MIN_RUNS_AFTER runs after it that pays the search's penalty."""
    if sigma is None or n < MIN_RUNS:
        return None
    a, b = n, MIN_RUNS_AFTER
    return (exp(sqrt(penalty(n, sigma) * (a + b) / (a * b))) - 1) * 100


def noise_of(y: Sequence[float], alpha: float = DEFAULT_ALPHA) -> Noise:
    n = len(y)
    s = noise_sigma(y)
    return Noise(runs=n, sigma=s, floor_pct=(exp(s) - 1) * 100 if s is not None else None,
                 penalty=penalty(n, s) if s is not None else None,
                 mde_pct=mde_fact_pct(n, s, alpha), drift_mde_pct=mde_drift_pct(n, s))


def before_after(y: Sequence[float], start: int, point: int, stop: int, higher_is_better: bool,
                 threshold_pct: float = DEFAULT_THRESHOLD_PCT, alpha: float = DEFAULT_ALPHA,
                 with_p: bool = True) -> Decision:
    """(a)'s test: runs [start, point) against [point, stop) of log values y, read by the
    decision rule. `with_p` False (a drift point): the estimate and intervals, no p."""
    y = np.asarray(y, dtype=float)
    a, b = y[start:point], y[point:stop]
    question = Question(higher_is_better, threshold_pct, alpha)
    if a.size == 0 or b.size == 0:
        return build(Evidence(Decided.INCONCLUSIVE, RUNS, blocks=int(b.size)), question)
    m = float(b.mean() - a.mean())
    df = a.size + b.size - 2
    ss = float(((a - a.mean()) ** 2).sum() + ((b - b.mean()) ** 2).sum())
    if df < 1:
        return build(Evidence(Decided.INCONCLUSIVE, RUNS, blocks=int(b.size), m=m), question)
    s = max(sqrt(ss / df), SIGMA_FLOOR)
    se = s * sqrt(1 / a.size + 1 / b.size)

    def interval(level):
        h = sps.t.ppf(1 - (1 - level) / 2, df) * se
        return (m - h, m + h)
    ci, eq = interval(1 - alpha), interval(1 - 2 * alpha)
    p = float(2 * sps.t.sf(abs(m) / se, df)) if with_p else None

    def p_at(edge, above):
        t = (m - edge) / se
        return float(sps.t.sf(t if above else -t, df))
    p_band = band_p_from_sides(m, p_at, lambda e, up: 2 * p_at(e, up), threshold_pct) \
        if with_p else None
    outcome = classify(ci[0], ci[1], eq[0], eq[1], p is not None and p < alpha, threshold_pct)
    return build(Evidence(outcome, RUNS, blocks=int(b.size), m=m, s=s, log_ci=ci,
                          log_eq_ci=eq, p=p, p_band=p_band,
                          mdc_pct=mde_fact_pct(int(a.size), s, alpha, after=int(b.size))),
                 question)


def _moved(y: np.ndarray, start: int, point: int, stop: int) -> bool:
    """The two-runs rule: the first MIN_RUNS_AFTER runs after `point` lie past the midpoint
    between the medians of [start, point) and [point, stop), and the last MIN_RUNS_AFTER
    runs before it (as many as there are) on the other side."""
    if stop - point < MIN_RUNS_AFTER or point - start < 1:
        return False
    before, after = float(np.median(y[start:point])), float(np.median(y[point:stop]))
    if before == after:
        return False
    mid = (before + after) / 2
    first = y[point:point + MIN_RUNS_AFTER]
    last = y[max(start, point - MIN_RUNS_AFTER):point]
    up = after > before
    return bool(np.all((first > mid) == up) and np.all((last < mid) == up))


def drift_points(y: np.ndarray, start: int, stop: int, pen: float) -> list[int]:
    """PELT's change points in y[start:stop] (absolute indices, each the first run after)."""
    if stop - start < 2 * MIN_RUNS_AFTER:
        return []
    import ruptures
    algo = ruptures.Pelt(model="l2", min_size=MIN_RUNS_AFTER, jump=1)
    ends = algo.fit(y[start:stop].reshape(-1, 1)).predict(pen=pen)
    return [start + e for e in ends[:-1]]


def _direction(d: Decision | None, higher_is_better: bool) -> Direction | None:
    if d is None or d.estimate is None or d.estimate == 1:
        return None
    return Direction.BETTER if (d.estimate > 1) == higher_is_better else Direction.WORSE


def detect(values: Sequence[float], fact_points: Sequence[int], higher_is_better: bool,
           threshold_pct: float = DEFAULT_THRESHOLD_PCT,
           alpha: float = DEFAULT_ALPHA) -> SeriesChanges:
    """Every change of one series before the family's correction (`settle` applies it): the
    fact points' tests and statuses as far as they go without it, the drift points."""
    v = np.asarray(values, dtype=float)
    bad = np.flatnonzero(~(v > 0))
    if bad.size:
        i = int(bad[0])
        return SeriesChanges(noise_of([], alpha), (), NoLog(i, float(v[i])))
    y = np.log(v)
    n = y.size
    noise = noise_of(y, alpha)
    facts = sorted({int(f) for f in fact_points if 0 < f < n})
    if noise.sigma is None:
        return SeriesChanges(noise, tuple(Change(f, FACT, UNDECIDED, f, n - f, None, None,
                                                 reason="too few runs for a noise estimate")
                                          for f in facts))
    edges = [0, *facts, n]
    drifts: list[int] = []
    for lo, hi in zip(edges, edges[1:]):
        found = drift_points(y, lo, hi, noise.penalty)
        bounds = [lo, *found, hi]
        drifts += [p for i, p in enumerate(found) if _moved(y, bounds[i], p, bounds[i + 2])]
    bounds = sorted({0, n, *facts, *drifts})
    changes = []
    for p in sorted(set(facts) | set(drifts)):
        k = bounds.index(p)
        start, stop = bounds[k - 1], bounds[k + 1]
        is_fact = p in facts
        d = before_after(y, start, p, stop, higher_is_better, threshold_pct, alpha,
                         with_p=is_fact)
        moved = _moved(y, start, p, stop)
        if is_fact:
            changes.append(Change(p, FACT, UNDECIDED, p - start, stop - p, d,
                                  _direction(d, higher_is_better),
                                  spike=stop - p >= MIN_RUNS_AFTER and not moved))
        else:
            changes.append(Change(p, DRIFT, CONFIRMED, p - start, stop - p, d,
                                  _direction(d, higher_is_better)))
    last = _last_run_suspected(y, bounds, noise.penalty, higher_is_better, threshold_pct, alpha)
    if last is not None and last.index not in {c.index for c in changes}:
        changes.append(last)
    return SeriesChanges(noise, tuple(changes))


def _last_run_suspected(y: np.ndarray, bounds: list[int], pen: float, hib: bool,
                        threshold_pct: float, alpha: float) -> Change | None:
    """The last run alone, past what a one-run segment would need to pay the penalty."""
    n = y.size
    start = max(b for b in bounds if b < n - 1) if n >= 2 else 0
    m = n - 1 - start
    if m < 1:
        return None
    level = float(np.median(y[start:n - 1]))
    if abs(float(y[-1]) - level) <= sqrt(pen * (m + 1) / m):
        return None
    d = before_after(y, start, n - 1, n, hib, threshold_pct, alpha, with_p=False)
    return Change(n - 1, DRIFT, SUSPECTED, m, 1, d, _direction(d, hib),
                  reason="one run after it: needs one more run")


def settle(series: Sequence[SeriesChanges], correction: str = CORRECTION
           ) -> list[SeriesChanges]:
    """The family's correction over every fact point of `series` (module docstring, (a)),
    and each fact point's status from it."""
    if correction not in METHODS:
        raise ValueError(f"correction {correction!r}: use one of {', '.join(METHODS)}")
    where = [(i, j) for i, s in enumerate(series) for j, c in enumerate(s.changes)
             if c.kind == FACT and c.decision is not None]
    adjusted = adjust_family([series[i].changes[j].decision for i, j in where], correction)
    raw = dict(zip(where, adjust_family([series[i].changes[j].decision for i, j in where],
                                        None)))
    out = [list(s.changes) for s in series]
    for (i, j), d in zip(where, adjusted):
        c = series[i].changes[j]
        out[i][j] = _fact_status(c, raw[(i, j)], d, correction)
    return [replace(s, changes=tuple(cs)) for s, cs in zip(series, out)]


def _fact_status(c: Change, raw: Decision, corrected: Decision, correction: str) -> Change:
    """A fact point's status from its corrected decision (module docstring, (a))."""
    adj = raw.p_holm if correction == "holm" else raw.p_bh
    significant = adj is not None and adj < raw.alpha
    if significant and c.spike:
        return replace(c, decision=raw, status=UNDECIDED,
                       reason="one run moved and the next did not: a spike, not a change")
    if significant and c.runs_after < MIN_RUNS_AFTER:
        return replace(c, decision=raw, status=SUSPECTED,
                       reason="one run after it: needs one more run")
    if significant:
        return replace(c, decision=raw, status=CONFIRMED)
    if corrected.decision == Decided.PASS:
        return replace(c, decision=raw, status=NO_CHANGE, direction=None)
    why = "too few runs on one side" \
        if raw.decision == Decided.INCONCLUSIVE and raw.p_value is None \
        else "neither a change nor its absence is shown at this noise and these runs"
    return replace(c, decision=raw, status=UNDECIDED, reason=why)


def size_word(d: Decision | None) -> str:
    """How large a change is against the threshold, from the decision's own word."""
    if d is None:
        return ""
    return {Decided.FAIL: "beyond ±threshold", Decided.DIFFERS: "within ±threshold",
            Decided.PASS: "within ±threshold"}.get(d.decision,
                                                   "size against ±threshold undecided")


__all__ = ["CONFIRMED", "SUSPECTED", "NO_CHANGE", "UNDECIDED", "STATUSES", "FACT", "DRIFT",
           "PENALTY_C", "MIN_RUNS_AFTER", "Change", "Noise", "NoLog", "SeriesChanges",
           "before_after", "detect", "drift_points", "mde_drift_pct", "mde_fact_pct",
           "noise_of", "noise_sigma", "penalty", "settle", "size_word", "NO_INTERVAL"]
