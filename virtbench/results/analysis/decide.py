"""A row against its reference: the decision of docs/decisions.md, made from the run's
blocks (virtbench/foundations/stats: paired, decision, sequential, multiplicity), as the result model's
VsReference (its message in the report layer's words: report/words/decisions.py), with the
published rule beside it and
the order effect inside blocks.

Which analysis (`mode`, RunInfo.analysis):
- "paired" (default): per block the log ratio of the environment to its reference; the
  geometric-mean ratio, its t interval, the sign-flip p (stats.decision.decide_paired).
- "sequential": the same blocks read with confidence sequences, for a run whose trials
  were adaptive (`trials = "auto"`): valid whenever the runner stopped.
- "unpaired" (`--analysis unpaired`): ratio of trimmed means, bootstrap, permutation p
  (stats.decision.decide_unpaired).
A row is compared unpaired whatever the mode when its blocks cannot be paired: against
another run's row (a fleet's host against the first host: different runs, no common
blocks), or when a value is 0 or below (retransmits, errors...: no logarithm). When a
trimmed mean is 0 or below there is no ratio at all: no verdict, and the row says why.

Then the whole run is one family (stats.multiplicity.adjust_family, Holm by default): every
comparison's claims are corrected together, and the p-values of the order effects are
corrected among themselves (Holm) before one is reported as significant."""
from __future__ import annotations

from dataclasses import dataclass
from math import log

import numpy as np

from ...foundations import stats
from ...core.defaults import CORRECTION
from ...foundations.model import OrderEffect, PublishedRule, VsReference
from ...foundations.stats import decision as dc
from ...foundations.stats import multiplicity, paired, sequential
from ...foundations.stats import significance as sig
from ...core.decisions import Decided
from ...foundations.stats.decision import UnpairedBecause
from ..report.words import decisions as words
from .rows import Row, env_first, lost_blocks

MODES = ("paired", "sequential", "unpaired")


@dataclass(frozen=True)
class ComparisonInputs:
    """One comparison to make: a row against its reference's row, and how to read them."""
    row: Row
    ref: Row
    reference: str                  # the reference environment's label
    reference_metric: str | None    # its metric (an instance's row: the single baseline's)
    basis: str                      # why this reference (VsReference.basis)
    shown_reference: str            # the reference as the messages name it
    same_run: bool                  # both rows from one run: their blocks can be paired
    mode: str                       # the run's analysis (MODES)
    threshold_pct: float
    alpha: float
    seed: int


@dataclass
class Pending:
    """A comparison made, before the family's correction."""
    inputs: ComparisonInputs
    decision: dc.Decision
    published_rule: PublishedRule
    power: float | None
    disturbed_excluded: int
    order: paired.PositionEffect | None
    unpaired: UnpairedBecause | None = None     # why a paired run compared it unpaired


def published_rule(values, ref_values, higher_is_better: bool, threshold_pct: float) -> PublishedRule:
    """The published studies' rule: ratio of trimmed means, |overhead| < threshold is a pass."""
    base = float(stats.trimmed_mean(ref_values))
    if base == 0:
        return PublishedRule()
    ratio = float(stats.trimmed_mean(values)) / base
    over = stats.overhead_pct(ratio, higher_is_better)
    # rounded so that exactly 10 % is not passed by a floating-point hair
    return PublishedRule(ratio=ratio, overhead_pct=over,
                         verdict=Decided.PASS if round(abs(over), 9) < threshold_pct
                         else Decided.FAIL)


def _positive(row: Row, ref: Row) -> bool:
    common = set(row.by_block) & set(ref.by_block)
    return all(np.isfinite(v) and v > 0 for b in common
               for v in (row.by_block[b], ref.by_block[b]))


def compare(c: ComparisonInputs) -> Pending | str:
    """The decision of `c.row` against `c.ref`, or why there is none (a ratio needs a
    positive trimmed mean on both sides)."""
    row, ref, mode = c.row, c.ref, c.mode
    hib = row.higher_is_better
    rule = published_rule(row.values, ref.values, hib, c.threshold_pct)
    why = None
    use = mode
    if mode != "unpaired" and not c.same_run:
        use, why = "unpaired", UnpairedBecause.OTHER_RUN
    elif mode != "unpaired" and not _positive(row, ref):
        use, why = "unpaired", UnpairedBecause.NO_LOG
    elif mode != "unpaired" and len(set(row.by_block) & set(ref.by_block)) < 2 \
            and min(len(row.values), len(ref.values)) >= 2:
        use, why = "unpaired", UnpairedBecause.FEW_COMMON
    order = None
    if use == "unpaired":
        low = [name for name, r in (("the environment", row), (c.reference, ref))
               if not stats.trimmed_mean(r.values) > 0]
        if low:
            return f"a trimmed mean of 0 or below ({' and '.join(low)}): no ratio, no verdict"
        d = dc.decide_unpaired(row.values, ref.values, hib, c.threshold_pct, c.alpha, c.seed)
        cvp = sig.pooled_cv(stats.cv(row.values), len(row.values), stats.cv(ref.values),
                            len(ref.values))
        power = (sig.power(len(row.values), len(ref.values), cvp, c.threshold_pct / 100,
                           c.alpha) if cvp is not None else None)
    else:
        if use == "sequential":
            d = sequential.decide_sequential(row.by_block, ref.by_block, hib, c.threshold_pct,
                                             c.alpha)
            power = None
        else:
            d = dc.decide_paired(row.by_block, ref.by_block, hib, c.threshold_pct, c.alpha,
                                 c.seed)
            power = (dc.paired_power(d.blocks, d.sd_log, log(1 + c.threshold_pct / 100),
                                     c.alpha) if d.sd_log else None)
        first = env_first(row, ref)
        if first is not None:
            order = paired.position_effect(paired.log_ratios(row.by_block, ref.by_block), first)
    return Pending(c, d, rule, power, lost_blocks(row, ref), order, why)


def _order(effect: paired.PositionEffect | None, p_holm: float | None,
           alpha: float) -> OrderEffect | None:
    if effect is None:
        return None
    return OrderEffect(first_pct=effect.first_pct, ci_low_pct=effect.ci_low_pct,
                       ci_high_pct=effect.ci_high_pct, p_value=effect.p_value, p_holm=p_holm,
                       significant=p_holm is not None and p_holm < alpha,
                       env_first=effect.n_env_first, ref_first=effect.n_ref_first,
                       balanced_ratio=effect.balanced_ratio, message=effect.message)


def to_vs(p: Pending, decision: dc.Decision, order_p_holm: float | None,
          correction: str | None = CORRECTION) -> VsReference:
    d = decision
    claim, verdict_p, verdict_p_adjusted = multiplicity.verdict_claim(d, correction)
    over = [stats.overhead_pct(x, d.higher_is_better) for x in (d.ci_low, d.ci_high)
            if x is not None]
    lo, hi = (sorted(over) if len(over) == 2 else (None, None))
    return VsReference(
        ratio=d.estimate if d.estimate is not None else float("nan"),
        overhead_pct=d.overhead_pct if d.overhead_pct is not None else float("nan"),
        ci_low=lo, ci_high=hi, ratio_ci_low=d.ci_low, ratio_ci_high=d.ci_high,
        p_value=d.p_value, verdict=d.decision, direction=d.direction, power=p.power,
        trials_needed=d.blocks_needed,
        message=words.decision_message(d, p.inputs.shown_reference, p.unpaired),
        alpha=d.alpha,
        threshold_pct=d.threshold_pct, reference=p.inputs.reference,
        reference_metric=p.inputs.reference_metric, basis=p.inputs.basis, analysis=d.analysis,
        estimator=d.estimator, p_method=d.p_method, p_holm=d.p_holm, p_bh=d.p_bh,
        p_band=d.p_band, p_band_holm=d.p_band_holm, p_band_bh=d.p_band_bh,
        verdict_claim=claim, verdict_p=verdict_p, verdict_p_adjusted=verdict_p_adjusted,
        eq_ci_low=d.eq_ci_low, eq_ci_high=d.eq_ci_high, blocks=d.blocks, sd_log=d.sd_log,
        mdc_pct=d.mdc_pct, disturbed_excluded=p.disturbed_excluded, published_rule=p.published_rule,
        order=_order(p.order, order_p_holm, d.alpha))


def finish(pending: list[Pending], correction: str | None) -> list[VsReference]:
    """The family's correction over every pending comparison, then each as a VsReference."""
    decisions = multiplicity.adjust_family([p.decision for p in pending], correction)
    ps = [p.order.p_value if p.order is not None else None for p in pending]
    idx = [i for i, x in enumerate(ps) if x is not None]
    adj = multiplicity.holm([ps[i] for i in idx])
    order_holm: list[float | None] = [None] * len(pending)
    for k, i in enumerate(idx):
        order_holm[i] = float(adj[k])
    return [to_vs(p, d, order_holm[i], correction)
            for i, (p, d) in enumerate(zip(pending, decisions))]
