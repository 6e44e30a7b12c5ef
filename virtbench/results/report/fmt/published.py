"""The published studies' figures beside the measured ones."""
from __future__ import annotations

from ....core.decisions import Decided
from ....foundations.model import Result, RunReport
from ..words import change
from . import numbers

PUBLISHED_COLUMNS = ("measured ratio", "published", "source")
MARK = {Decided.PASS: "✓", Decided.FAIL: "✗"}          # the published studies' own marks


def published_cell(vs, higher_is_better: bool = True, unit: str = "") -> str:
    """The published studies' rule on trimmed means: its change (words/change.py) and ✓ / ✗."""
    rule = vs.published_rule if vs else None
    if rule is None or rule.overhead_pct is None:
        return "—"
    said = change.cell(rule.ratio, higher_is_better, unit, rule.overhead_pct)
    return f"{said} {MARK[Decided.PASS] if rule.verdict == Decided.PASS else MARK[Decided.FAIL]}"


def published_ratio(pub) -> str:
    """The source's figure: its ratio (≈ when derived from its absolute values) and/or its
    own verdict (a PublishedMatch or a PublishedFigure)."""
    if not pub:
        return "—"
    bits = []
    if pub.ratio is not None:
        bits.append(numbers.ratio(pub.ratio))
    elif pub.value is not None:
        bits.append(f"value {numbers.value(pub.value)}")
    if pub.verdict:
        bits.append(MARK[pub.verdict])
    return " ".join(bits) or "—"


def published_cells(r: Result, baseline: str | None = None) -> list[str]:
    """[measured ratio vs the published figure's reference, published figure, its source]."""
    pub = r.published
    if not pub:
        return ["—", "—", "—"]
    ref = "" if pub.versus in (None, baseline) else f" vs {pub.versus}"
    return [numbers.ratio(pub.measured_ratio) + ref, published_ratio(pub), pub.source]


def has_published(analysis: RunReport) -> bool:
    return any(r.published for r in analysis.results) or bool(analysis.published_only)


def published_only_lines(analysis: RunReport) -> list[str]:
    """One line per published figure that no measured result of the run matches."""
    out = []
    for p in analysis.published_only:
        ref = f" vs {p.versus}" if p.versus else ""
        extra = [x for x in (p.unmeasured and f"not measurable here: {p.unmeasured}",
                             p.note) if x]
        why = f" — {'; '.join(extra)}" if extra else ""
        out.append(f"{p.environment} · {p.benchmark} · {p.metric}: "
                   f"{published_ratio(p)}{ref} ({p.source}){why}")
    return out

