"""A published claim checked on a run: "A / B >= 1.5", "A > B", "A == B" (within ±T %).

Each relation is a claim about the ratio r = A / B of one metric, read with the same
statistics as the decisions (stats.decision):
- paired (the default): the blocks' log ratios d = log(A / B); the claim "r >= k" holds when
  the (1 - 2 alpha) t interval of mean d lies above log k (the one-sided t test of
  "r <= k" has p < alpha), does not hold when it lies below (the test of "r >= k" has
  p < alpha); otherwise it is inconclusive, with the blocks that would likely decide at
  the observed ratio and spread (80 % probability, normal approximation, as
  decision.blocks_needed). "r <= k" mirrors it; "A > B" is "r > 1" and "A < B" "r < 1"
  (a strict and a non-strict bound are the same claim for a continuous ratio).
- unpaired (values of 0 or below, or `--analysis unpaired`): the ratio of trimmed means
  and its percentile bootstrap, the p-values the shares of resamples on the wrong side.
- "A == B": the decision's band claim at ±T (pass or differs: holds; fail: does not hold).

Each claim's p is the p of the status it reached (inconclusive: the smaller of the two);
`adjust_claims` corrects them over the study's claims with Holm, and a status whose
adjusted p is not below alpha becomes inconclusive (`held_before_holm` keeps what it was).
A Relation is figures; virtbench/results/report/words/decisions.py says it in words. Pure functions.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from math import exp, log, sqrt
from typing import Hashable, Mapping, Sequence

import numpy as np
from scipy import stats as sps

from ...core.decisions import ClaimStatus, Decided
from . import paired
from .decision import (
    DEFAULT_ALPHA,
    MAX_BLOCKS,
    TARGET_POWER,
    Decision,
    _bootstrap_log_ratios,
    decide_paired,
    decide_unpaired,
)
from .describe import trimmed_mean
from .multiplicity import holm

AT_LEAST, AT_MOST, WITHIN = ">=", "<=", "=="


@dataclass(frozen=True)
class Relation:
    """A claim "A / B op bound" read on a run."""
    status: ClaimStatus              # holds | does not hold | inconclusive
    analysis: str                    # "paired" | "unpaired"
    op: str                          # AT_LEAST | AT_MOST | WITHIN (bound: ±threshold %)
    bound: float
    alpha: float
    estimate: float | None           # A / B
    ci_low: float | None             # (1 - 2 alpha) interval of A / B
    ci_high: float | None
    p_value: float | None            # p of the status reached (inconclusive: the smaller)
    blocks: int
    blocks_needed: int | None
    decision: Decision | None = None     # WITHIN: the decision whose band claim it is
    p_holm: float | None = None
    held_before_holm: ClaimStatus | None = None  # the status Holm over `claims` claims took back
    claims: int = 0


def _needed(m: float, s: float, edge: float, alpha: float, at_least: int) -> int | None:
    """Fewest blocks at which the one-sided (1 - alpha) bound clears `edge` with 80 %
    probability, m and s held."""
    if m == edge or not np.isfinite(m):
        return None
    if s == 0:
        return at_least
    n = np.arange(max(at_least, 2), MAX_BLOCKS + 1)
    ok = sps.norm.cdf(abs(m - edge) / (s / np.sqrt(n)) - sps.t.ppf(1 - alpha, n - 1)) \
        >= TARGET_POWER
    return int(n[np.argmax(ok)]) if ok.any() else None


def _status(p_holds: float, p_not: float, alpha: float) -> tuple[str, float]:
    if p_holds < alpha:
        return ClaimStatus.HOLDS, p_holds
    if p_not < alpha:
        return ClaimStatus.NOT_HOLDS, p_not
    return ClaimStatus.INCONCLUSIVE, min(p_holds, p_not)


def ratio_relation(env: Mapping[Hashable, float], ref: Mapping[Hashable, float], op: str,
                   bound: float, alpha: float = DEFAULT_ALPHA) -> Relation:
    """"A / B op bound" (op >= or <=) from {block: value} of A and of B (paired)."""
    if op not in (AT_LEAST, AT_MOST) or not bound > 0:
        raise ValueError(f"relation {op!r} {bound!r}: use >= or <= a positive bound")
    lr = paired.log_ratios(env, ref)
    n, edge = lr.n, log(bound)
    if n < 2:
        return Relation(ClaimStatus.INCONCLUSIVE, "paired", op, bound, alpha,
                        exp(lr.d.mean()) if n else None, None, None, None, n, None)
    m, s = float(lr.d.mean()), float(lr.d.std(ddof=1))
    se = s / sqrt(n)
    if s == 0:
        above = 0.0 if m > edge else 1.0
        below = 0.0 if m < edge else 1.0
        lo = hi = m
    else:
        above = float(sps.t.sf((m - edge) / se, n - 1))        # p of "r <= bound"
        below = float(sps.t.cdf((m - edge) / se, n - 1))       # p of "r >= bound"
        half = float(sps.t.ppf(1 - alpha, n - 1)) * se
        lo, hi = m - half, m + half
    p_holds, p_not = (above, below) if op == AT_LEAST else (below, above)
    status, p = _status(p_holds, p_not, alpha)
    need = _needed(m, s, edge, alpha, n + 1) if status == ClaimStatus.INCONCLUSIVE else None
    return Relation(status, "paired", op, bound, alpha, exp(m), exp(lo), exp(hi), p, n, need)


def ratio_relation_unpaired(a, b, op: str, bound: float, alpha: float = DEFAULT_ALPHA,
                            seed=0) -> Relation:
    """The same claim from unpaired samples: ratio of trimmed means, bootstrap resamples."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    boot = _bootstrap_log_ratios(a, b, seed)
    if boot is None or not np.all(np.isfinite(boot)):
        return Relation(ClaimStatus.INCONCLUSIVE, "unpaired", op, bound, alpha, None, None,
                        None, None,
                        int(a.size), None)
    edge = log(bound)
    m = log(float(trimmed_mean(a)) / float(trimmed_mean(b)))
    above = float(np.mean(boot <= edge))        # p of "r <= bound"
    below = float(np.mean(boot >= edge))
    p_holds, p_not = (above, below) if op == AT_LEAST else (below, above)
    status, p = _status(p_holds, p_not, alpha)
    lo, hi = (float(x) for x in np.quantile(boot, [alpha, 1 - alpha]))
    return Relation(status, "unpaired", op, bound, alpha, exp(m), exp(lo), exp(hi), p,
                    int(a.size), None)


def within_relation(env, ref, threshold_pct: float, higher_is_better: bool,
                    alpha: float = DEFAULT_ALPHA, paired_: bool = True, seed=0) -> Relation:
    """"A == B": the decision's band claim at ±threshold_pct: holds when the (1 - 2 alpha)
    interval lies inside (pass, differs), does not hold when the (1 - alpha) one lies
    beyond (fail). env / ref: {block: value} (paired) or sample lists (unpaired)."""
    d = (decide_paired(env, ref, higher_is_better, threshold_pct, alpha, seed) if paired_
         else decide_unpaired(env, ref, higher_is_better, threshold_pct, alpha, seed))
    status = {Decided.PASS: ClaimStatus.HOLDS, Decided.DIFFERS: ClaimStatus.HOLDS,
              Decided.FAIL: ClaimStatus.NOT_HOLDS}.get(d.decision, ClaimStatus.INCONCLUSIVE)
    return Relation(status, d.analysis, WITHIN, threshold_pct, alpha, d.estimate, d.eq_ci_low,
                    d.eq_ci_high, d.p_band, d.blocks, d.blocks_needed, decision=d)


def adjust_claims(relations: Sequence[Relation], alpha: float = DEFAULT_ALPHA
                  ) -> list[Relation]:
    """Holm over the claims' p-values; a decided status whose adjusted p is not below alpha
    becomes inconclusive."""
    idx = [i for i, r in enumerate(relations) if r.p_value is not None]
    adj = holm([relations[i].p_value for i in idx])
    out = list(relations)
    for k, i in enumerate(idx):
        r = replace(relations[i], p_holm=float(adj[k]))
        if r.status != ClaimStatus.INCONCLUSIVE and r.p_holm >= alpha:
            r = replace(r, status=ClaimStatus.INCONCLUSIVE, held_before_holm=r.status,
                        claims=len(idx))
        out[i] = r
    return out
