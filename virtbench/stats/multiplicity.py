"""Many rows, one study: adjusted p-values for the family of (environment, metric) rows.

A study reports many rows at once; at alpha 0.05 each, twenty rows with no difference at all
would show about one "difference" by chance. Two corrections, both on each row's raw p of
"no difference" (sign-flip p for the paired analysis, anytime-valid p for the sequential
one, permutation p unpaired):

- Holm (1979), family-wise: the chance of even one false claim of a difference in the
  family stays <= alpha. Step-down Bonferroni: sort the m p-values, the i-th smallest
  (i = 1..m) is multiplied by (m - i + 1), then made monotone. Valid under any dependence
  between rows (rows share their reference, so they are dependent). The default, because a
  report's "fail" and "differs" are read one by one, each as a claim.
- Benjamini-Hochberg (1995), false discovery rate: among the claimed differences, the
  expected share of false ones stays <= alpha; more claims survive. scipy's
  false_discovery_control. (BH is proven for independent or positively dependent p-values,
  which rows sharing a reference are expected to be.)

`adjust_family` fills p_holm and p_bh of every Decision and, with method "holm" or "bh",
lets a difference claim stand only when its adjusted p is below alpha: "differs, within
threshold" falls back to "pass" (the equivalence still holds, the difference no longer
counts as detected) and "fail" to "inconclusive". method None only reports the columns.
With m rows the exact sign-flip test needs 2 / 2^n < alpha / m to survive Holm: about
log2(2 m / alpha) blocks (9 for 10 rows at alpha 0.05); the message says so.

Holm is a few lines on purpose: statsmodels' multipletests does the same but would bring
pandas and patsy into a tool that runs on the hosts it measures; tests/stats check these
against the closed-testing definition of Holm and against scipy for BH.
"""
from __future__ import annotations

from dataclasses import replace
from math import floor, log2
from typing import Sequence

import numpy as np
from scipy import stats as sps

from .decision import DIFFERS, FAIL, INCONCLUSIVE, PASS, Decision

METHODS = ("holm", "bh")


def holm(p) -> np.ndarray:
    """Holm step-down adjusted p-values, in the input's order."""
    p = np.asarray(p, dtype=float)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    stepped = p[order] * (m - np.arange(m))
    adj = np.minimum(1.0, np.maximum.accumulate(stepped))
    out = np.empty(m)
    out[order] = adj
    return out


def bh(p) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (scipy.stats.false_discovery_control)."""
    p = np.asarray(p, dtype=float)
    if p.size == 0:
        return p.copy()
    return np.asarray(sps.false_discovery_control(p, method="bh"), dtype=float)


def adjust(p, method: str) -> np.ndarray:
    if method not in METHODS:
        raise ValueError(f"multiplicity method {method!r}: use one of {', '.join(METHODS)}")
    return holm(p) if method == "holm" else bh(p)


def adjust_family(decisions: Sequence[Decision], method: str | None = "holm"
                  ) -> list[Decision]:
    """The family's decisions with p_holm and p_bh filled, and (method set) difference
    claims that do not survive the correction taken back. Rows without a p (too few
    blocks) are not part of the family and keep None."""
    if method is not None and method not in METHODS:
        raise ValueError(f"multiplicity method {method!r}: use one of {', '.join(METHODS)} or None")
    idx = [i for i, d in enumerate(decisions) if d.p_value is not None]
    ps = np.array([decisions[i].p_value for i in idx], dtype=float)
    p_holm, p_bh = holm(ps), bh(ps)
    m = len(idx)
    out = list(decisions)
    for k, i in enumerate(idx):
        d = replace(decisions[i], p_holm=float(p_holm[k]), p_bh=float(p_bh[k]))
        if method is not None and d.decision in (DIFFERS, FAIL):
            adj = d.p_holm if method == "holm" else d.p_bh
            if adj >= d.alpha:
                d = _take_back(d, adj, method, m)
        out[i] = d
    return out


def _take_back(d: Decision, adj: float, method: str, m: int) -> Decision:
    name = "Holm" if method == "holm" else "Benjamini-Hochberg"
    why = (f"not significant after {name} over {m} rows (adjusted p {adj:.3g} >= "
           f"{d.alpha:g})")
    need = None
    if d.analysis == "paired" and m > 1:
        need = floor(log2(2 * m / d.alpha)) + 1      # 2 / 2^n < alpha / m
        if need > d.blocks:
            why += f"; the sign-flip test can reach that from {need} blocks"
        else:
            need = None
    if d.decision == DIFFERS:
        return replace(d, decision=PASS, message=f"{d.message}; {why}: pass")
    return replace(d, decision=INCONCLUSIVE, blocks_needed=need,
                   message=f"{d.message}; {why}: inconclusive")
