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

A decision makes up to two claims, and each is corrected in its own family:
- the band claim (every decided row): "inside +-T" (pass, differs) or "beyond +-T" (fail),
  with its p `p_band` (stats.decision): the TOST p inside, the p of "beyond the nearer
  edge" outside. Corrected over the rows that have one: `p_band_holm`, `p_band_bh`.
- the difference claim ("differs, within threshold"): the p of "no difference" `p_value`
  (sign-flip, anytime-valid or permutation). Corrected: `p_holm`, `p_bh`.

`adjust_family` fills the adjusted columns of every Decision and, with method "holm" or
"bh", lets a claim stand only when its adjusted p is below alpha: a band claim that does not
survive makes the row "inconclusive" (pass, differs and fail alike); a difference claim that
does not survive turns "differs, within threshold" into "pass" (the equivalence still holds,
the difference no longer counts as detected). method None only reports the columns.
Why a fail is judged by its own p and not by the p of "no difference": the claim is "beyond
+-T", and the exact sign-flip test cannot go below 2 / 2^n (1/16 at the 5 blocks of a quick
run), so a 17x slowdown would never survive the correction. A row without `p_band` (a
decision made before this existed) keeps the older rule: a fail stands when its p of "no
difference" survives. With m rows the sign-flip test needs 2 / 2^n < alpha / m to survive
Holm: about log2(2 m / alpha) blocks (9 for 10 rows at alpha 0.05); the decision says so
(its `taken_back`).

Holm is a few lines on purpose: statsmodels' multipletests does the same but would bring
pandas and patsy into a tool that runs on the hosts it measures; tests/stats check these
against the closed-testing definition of Holm and against scipy for BH.
"""
from __future__ import annotations

from dataclasses import replace
from math import log
from typing import Sequence

import numpy as np
from scipy import stats as sps

from ...core.defaults import CORRECTION
from ...core.decisions import Decided
from . import paired
from .decision import Decision, TakenBack

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


def _adjusted(values: list[float | None]) -> tuple[list, list]:
    """(Holm, BH) of the values that are not None, None elsewhere."""
    idx = [i for i, p in enumerate(values) if p is not None]
    ps = np.array([values[i] for i in idx], dtype=float)
    h, b = holm(ps), bh(ps)
    out_h: list[float | None] = [None] * len(values)
    out_b: list[float | None] = [None] * len(values)
    for k, i in enumerate(idx):
        out_h[i], out_b[i] = float(h[k]), float(b[k])
    return out_h, out_b


def adjust_family(decisions: Sequence[Decision], method: str | None = CORRECTION
                  ) -> list[Decision]:
    """The family's decisions with p_holm, p_bh, p_band_holm and p_band_bh filled, and
    (method set) claims that do not survive the correction taken back (module docstring).
    Rows without a p are not part of that family and keep None."""
    if method is not None and method not in METHODS:
        raise ValueError(f"multiplicity method {method!r}: use one of {', '.join(METHODS)} or None")
    p_holm, p_bh = _adjusted([d.p_value for d in decisions])
    band_holm, band_bh = _adjusted([d.p_band for d in decisions])
    m_diff = sum(p is not None for p in p_holm)
    m_band = sum(p is not None for p in band_holm)
    out = []
    for i, d in enumerate(decisions):
        d = replace(d, p_holm=p_holm[i], p_bh=p_bh[i], p_band_holm=band_holm[i],
                    p_band_bh=band_bh[i])
        if method is not None and d.decision in (Decided.PASS, Decided.DIFFERS, Decided.FAIL):
            band_adj = d.p_band_holm if method == "holm" else d.p_band_bh
            diff_adj = d.p_holm if method == "holm" else d.p_bh
            if band_adj is not None and band_adj >= d.alpha:
                d = _band_taken_back(d, band_adj, method, m_band)
            elif d.decision == Decided.FAIL and band_adj is None and diff_adj is not None \
                    and diff_adj >= d.alpha:
                d = _take_back(d, diff_adj, method, m_diff)
            elif d.decision == Decided.DIFFERS and diff_adj is not None and diff_adj >= d.alpha:
                d = _take_back(d, diff_adj, method, m_diff)
        out.append(d)
    return out


def verdict_claim(d: Decision, method: str | None = CORRECTION
                  ) -> tuple[str, float | None, float | None]:
    """The claim a decision's verdict makes and its p, raw and adjusted by the family's
    correction `method` (None: no adjusted p): what a report shows beside the verdict, so
    that the two never disagree.
    - pass and fail claim the band ("inside" / "beyond"): p_band; a fail without p_band (a
      decision made before it existed) was judged by p of no difference: p_value.
    - differs claims a difference: p_value.
    - inconclusive claims nothing: the claim the correction took back when it did, else the
      band claim it could not make (its p is then above alpha, or missing).
    Returns ("band" | "difference", p, adjusted p)."""
    def band() -> tuple[str, float | None, float | None]:
        return "band", d.p_band, {"holm": d.p_band_holm, "bh": d.p_band_bh}.get(method)

    def difference() -> tuple[str, float | None, float | None]:
        return "difference", d.p_value, {"holm": d.p_holm, "bh": d.p_bh}.get(method)

    if d.decision == Decided.DIFFERS:
        return difference()
    if d.decision == Decided.FAIL and d.p_band is None:
        return difference()
    if d.decision == Decided.INCONCLUSIVE and d.taken_back is not None:
        return difference() if d.taken_back.claim == "difference" else band()
    return band()


def blocks_for_a_difference(rows: int, alpha: float) -> int | None:
    """Fewest blocks from which the sign-flip test's smallest p lets a lone difference among
    `rows` rows survive Holm or Benjamini-Hochberg (both ask p < alpha / rows of the one
    smallest p when the others are large): 2 / 2^n < alpha / rows, about log2(2 rows /
    alpha). None when no number of blocks can (beyond exact enumeration the Monte Carlo
    test's floor is 1 / (1 + its resamples))."""
    level = alpha / max(rows, 1)
    n = 2
    while paired.min_sign_flip_p(n) >= level:
        if n > paired.EXACT_MAX_BLOCKS:
            return None
        n += 1
    return n


def method_name(method: str) -> str:
    """How reports and messages name a correction: "Holm" or "Benjamini-Hochberg"."""
    return "Holm" if method == "holm" else "Benjamini-Hochberg"


def _band_taken_back(d: Decision, adj: float, method: str, m: int) -> Decision:
    """A band claim that does not survive the correction: inconclusive, with the blocks
    that would decide at alpha / m (Holm's first step) when the spread is known."""
    need = None
    if d.analysis in ("paired", "sequential") and d.sd_log is not None and d.estimate:
        from .decision import blocks_needed, t_multiplier
        if d.analysis == "paired":
            mult = t_multiplier(d.alpha / m)
        else:
            from .sequential import TIGHT_AT, _mult
            mult = _mult(d.alpha, TIGHT_AT, level=d.alpha / m)
        need = blocks_needed(log(d.estimate), d.sd_log, d.threshold_pct, mult,
                             at_least=d.blocks + 1)
    return replace(d, decision=Decided.INCONCLUSIVE,
                   direction=None if d.decision != Decided.FAIL else d.direction,
                   blocks_needed=need,
                   taken_back=TakenBack("band", d.decision, method, m, adj, need))


def _take_back(d: Decision, adj: float, method: str, m: int) -> Decision:
    """A difference claim that does not survive the correction: a "differs" is a pass, a
    fail judged by it inconclusive (with the blocks from which the sign-flip test can reach
    alpha / m, paired)."""
    need = None
    if d.analysis == "paired" and m > 1:
        need = blocks_for_a_difference(m, d.alpha)    # 2 / 2^n < alpha / m
        if need is None or need <= d.blocks:
            need = None
    taken_back = TakenBack("difference", d.decision, method, m, adj, need)
    if d.decision == Decided.DIFFERS:
        return replace(d, decision=Decided.PASS, taken_back=taken_back)
    return replace(d, decision=Decided.INCONCLUSIVE, blocks_needed=need, taken_back=taken_back)
