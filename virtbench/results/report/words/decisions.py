"""Decisions and claims in words: the sentences the result model stores (VsReference.message,
ClaimLink.message, ClaimResult.message) and the runner's reasons for another block, from
the figures that virtbench/foundations/stats gives (stats.decision.Decision and its notes,
stats.multiplicity's taken-back claims, stats.sequential.Undecided, stats.claims.Relation).
The one place that builds the result model (results/analysis: decide.py, claims.py; the
runner's undecided.py) calls these; no report format words a decision again. Pure.

A decision's message states its figures on the scale the decision is made on: the overhead
and its intervals in % of the metric's own scale, where the threshold band is ±T % (so a
37.5× slowdown of a throughput is "97.3 % worse than the reference: beyond ±10 %"); the
reports say the change itself by words/change.py's rule."""
from __future__ import annotations

import numpy as np

from ....core.decisions import ClaimStatus, Decided
from ....foundations.stats import claims as sc
from ....foundations.stats import decision as dc
from ....foundations.stats.decision import UnpairedBecause
from ....foundations.stats.multiplicity import method_name
from ....foundations.stats.ratio import overhead_pct
from ....foundations.stats.sequential import Undecided

THE_REFERENCE = "the reference"
TRIMMED = "compared unpaired (ratio of trimmed means)"
UNPAIRED = {
    UnpairedBecause.NO_LOG: f"values of 0 or below have no logarithm: {TRIMMED}",
    UnpairedBecause.OTHER_RUN: f"another run's row (no common blocks): {TRIMMED}",
    UnpairedBecause.FEW_COMMON: f"fewer than 2 blocks hold both values: {TRIMMED}",
}


def decision_message(d: dc.Decision, reference: str = THE_REFERENCE,
                     unpaired: UnpairedBecause | None = None) -> str:
    """The decision in words: how far from `reference` and what that decides, then why it
    was compared unpaired (`unpaired`, the caller's reason), its own notes, and a claim the
    family's correction took back."""
    parts = [_verdict(d, reference), UNPAIRED.get(unpaired, ""),
             *(_note(d, n) for n in d.notes)]
    msg = "; ".join(x for x in parts if x)
    if d.taken_back is not None:
        msg += f"; {_taken_back(d, d.taken_back)}"
    return msg


def _verdict(d: dc.Decision, reference: str) -> str:
    """How far from the reference, and what the intervals decide (before any correction)."""
    decision = d.taken_back.was if d.taken_back is not None else d.decision
    word = "sequence" if d.analysis == "sequential" else "interval"
    conf = f"{(1 - d.alpha) * 100:g} % {word}"
    eq_conf = f"{(1 - 2 * d.alpha) * 100:g} % {word}"
    eq_ci = _ratio_ci(d.eq_ci_low, d.eq_ci_high, d.higher_is_better)
    p_txt = f"p {d.p_value:.3g}" if d.p_value is not None else "no p"
    band_txt = f"±{d.threshold_pct:g} %"
    size = _size(d.overhead_pct, reference)
    if decision == Decided.PASS:
        return f"{size}: equivalent within {band_txt} ({eq_conf} {eq_ci}), no difference " \
               f"detected ({p_txt})"
    if decision == Decided.DIFFERS:
        return f"{size}: a real difference ({p_txt} < {d.alpha:g}) but within {band_txt} " \
               f"({eq_conf} {eq_ci})"
    if decision == Decided.FAIL:
        return f"{size}: beyond {band_txt} ({conf} " \
               f"{_ratio_ci(d.ci_low, d.ci_high, d.higher_is_better)})"
    if d.blocks_needed is None:
        tail = ("the estimate sits on the threshold or the spread is unknown: "
                "no practical number of blocks decides")
    else:
        tail = f"about {d.blocks_needed} blocks would decide ({d.blocks_needed_how})"
    return f"{size}: undecided after {d.blocks} blocks ({eq_conf} {eq_ci}, {p_txt}); {tail}"


def _size(over: float | None, reference: str) -> str:
    """The overhead against the reference in words."""
    if over is None:
        return "no estimate"
    if round(over, 1) == 0:
        return f"the same as {reference} to 0.1 %"
    return f"{abs(over):.1f} % {'worse' if over > 0 else 'better'} than {reference}"


def _ratio_ci(lo: float | None, hi: float | None, higher_is_better: bool) -> str:
    """An interval of the ratio as overheads, lower first."""
    if lo is None or hi is None or not np.isfinite(lo) or not np.isfinite(hi):
        return "no interval yet"
    o = sorted((overhead_pct(lo, higher_is_better), overhead_pct(hi, higher_is_better)))
    return f"{o[0]:+.1f} % to {o[1]:+.1f} %"


def _note(d: dc.Decision, note: dc.Note) -> str:
    """What qualifies the decision, in words."""
    if isinstance(note, dc.NoInterval):
        return "fewer than 2 blocks with both values: no interval"
    if isinstance(note, dc.NoBlocks):
        return "no blocks with both values"
    if isinstance(note, dc.BelowMinimum):
        return f"{d.blocks} of at least {note.min_blocks} blocks"
    if isinstance(note, dc.SignFlipUnreachable):
        return (f"with {d.blocks} blocks the sign-flip test cannot reach p < {d.alpha:g} "
                f"(smallest p {note.smallest_p:.3g})")
    return (f"with {d.blocks} vs {note.reference_samples} samples the permutation test cannot "
            f"reach p < {d.alpha:g} (smallest p {note.smallest_p:.3g})")


def _taken_back(d: dc.Decision, t: dc.TakenBack) -> str:
    """Why the family's correction took a claim back, and what the decision became."""
    after = f"after {method_name(t.method)} over {t.rows} rows (adjusted p {t.adjusted_p:.3g} " \
            f">= {d.alpha:g})"
    if t.claim == "band":
        why = (f"not {'beyond' if t.was == Decided.FAIL else 'within'} ±{d.threshold_pct:g} % "
               f"{after}")
        if t.blocks_needed is not None:
            why += f"; about {t.blocks_needed} blocks would decide at alpha {d.alpha:g}/{t.rows}"
        return f"{why}: {Decided.INCONCLUSIVE}"
    why = f"not significant {after}"
    if t.blocks_needed is not None:
        why += f"; the sign-flip test can reach that from {t.blocks_needed} blocks"
    return f"{why}: {Decided.PASS if d.decision == Decided.PASS else Decided.INCONCLUSIVE}"


def undecided_reason(u: Undecided, reference: str = THE_REFERENCE) -> str:
    """Why the runner gives a row another block."""
    if u.decision is None:
        return f"{u.blocks} of at least {u.min_blocks} blocks"
    d = u.decision
    msg = decision_message(d, reference)
    if u.resolve_pct is None:
        return msg
    return (f"{msg}; running on until a change of {u.resolve_pct:g} % is ruled out too "
            f"({(1 - d.alpha) * 100:.0f} % sequence "
            f"{(d.ci_low - 1) * 100:+.1f} % to {(d.ci_high - 1) * 100:+.1f} % of the ratio)")


def relation_message(r: sc.Relation, reference: str = THE_REFERENCE) -> str:
    """A claim's relation in words: the ratio and its interval against the claimed bound
    (or, for "A == B", the decision), then what would decide it or what Holm took back."""
    msg = _relation(r, reference)
    if r.held_before_holm is not None:
        msg += (f"; {r.held_before_holm} at p {r.p_value:.3g}, but not after Holm over "
                f"{r.claims} claims (adjusted p {r.p_holm:.3g})")
    return msg


def _relation(r: sc.Relation, reference: str) -> str:
    """The relation as read, before the claims' correction."""
    if r.decision is not None:
        return decision_message(r.decision, reference)
    conf = f"{(1 - 2 * r.alpha) * 100:g} %"
    claimed = f"claimed {'at least' if r.op == sc.AT_LEAST else 'at most'} {r.bound:g}"
    if r.analysis == "unpaired":
        if r.estimate is None:
            return "fewer than 2 samples a side, or a trimmed mean of 0 or below: no ratio"
        return (f"ratio of trimmed means {_r(r.estimate)} ({conf} bootstrap interval "
                f"{_r(r.ci_low)} to {_r(r.ci_high)}, unpaired); {claimed}")
    if r.ci_low is None:
        return f"{r.blocks} block(s) with both values: no interval"
    msg = (f"ratio {_r(r.estimate)} ({conf} interval {_r(r.ci_low)} to {_r(r.ci_high)}, "
           f"{r.blocks} blocks); {claimed}")
    if (r.held_before_holm or r.status) == ClaimStatus.INCONCLUSIVE:
        msg += "; " + (f"about {r.blocks_needed} blocks would decide" if r.blocks_needed else
                       "no practical number of blocks decides (the ratio sits on the bound)")
    return msg


def claim_message(status: ClaimStatus, links) -> str:
    """A claim's status in words from its relations (ClaimLinks): the one that does not
    hold, every one when all hold, else each open one with what would decide it."""
    def line(link) -> str:
        return f"{link.left} / {link.right} {link.relation}: {link.status} ({link.message})"
    if status == ClaimStatus.NOT_HOLDS:
        return "; ".join(line(x) for x in links if x.status == ClaimStatus.NOT_HOLDS)
    if status == ClaimStatus.HOLDS:
        return "; ".join(line(x) for x in links)
    return "; ".join(line(x) for x in links if x.status != ClaimStatus.HOLDS)


def not_measured(absent: list[tuple[str, str]]) -> str:
    """A claim whose environments (name, spec) this run did not measure."""
    return "not measured in this run: " + ", ".join(f"{n} ({spec})" for n, spec in absent)


def not_in_run(metric: str, benchmark: str, labels: list[str]) -> str:
    """A claim whose metric these environments of the run do not have."""
    return f"no {metric} of {benchmark} in this run for " + ", ".join(labels)


def _r(x: float) -> str:
    """A ratio in a message: 3 decimals below 10 (1.004, not 1), 3 significant above."""
    return f"{x:.3f}" if abs(x) < 10 else f"{x:.3g}"
