"""The cells of a result's row in the per-benchmark tables, beside its verdict."""
from __future__ import annotations

from ....foundations.model import Result
from ..words import change
from . import header, numbers, published


def direction(higher_is_better: bool) -> str:
    return "↑" if higher_is_better else "↓"


def metric_cell(r) -> str:
    """`triad_mb_s ↑ (MB/s)`: a result's or comparison row's metric, direction and unit."""
    return f"{r.metric} {direction(r.higher_is_better)} ({r.unit})"


def cv_cell(result: Result) -> str:
    return numbers.pct(result.cv * 100, signed=False) if result.cv is not None else "n/a"


def verdict_p(vs) -> float | None:
    """The p of the claim the verdict makes (VsReference.verdict_p); a report made before
    verdicts named their claim: the p of 'no difference'."""
    if vs is None:
        return None
    return vs.verdict_p if vs.verdict_claim else vs.p_value


def difference_p_adjusted(vs, correction: str | None) -> float | None:
    """The p of 'no difference' after the run's correction."""
    if vs is None:
        return None
    return vs.p_bh if correction == "bh" else vs.p_holm


def adjusted_p(vs, correction: str | None) -> float | None:
    """verdict_p after the run's correction."""
    if vs is None:
        return None
    return vs.verdict_p_adjusted if vs.verdict_claim else difference_p_adjusted(vs, correction)


def mdc_cell(vs) -> str:
    return "—" if vs is None or vs.mdc_pct is None else f"{vs.mdc_pct:.1f} %"


def comparison_columns(correction: str | None) -> list[str]:
    """The columns of a comparison in the per-benchmark tables (comparison_cells)."""
    return ["published", "overhead", "overhead CI", "p",
            f"p {header.CORRECTIONS.get(correction, 'adj')}", "MDC"]


def change_cells(vs, higher_is_better: bool, unit: str) -> list[str]:
    """A comparison's change and its (1 - alpha) interval, as words/change.py says them in a
    cell ("+15.8 %" [+1.2, +2.4]; "37.5× slower" [30.1, 46.7])."""
    said = change.said(vs.ratio, higher_is_better, unit, vs.overhead_pct)
    span = said.interval(*change.ratio_interval(vs, higher_is_better), higher_is_better)
    return [said.cell(), span or "n/a"]


def comparison_cells(r: Result, vs, correction: str | None) -> list[str]:
    """The published rule (trimmed means, ✓/✗), the verdict's change and (1 - alpha)
    interval, the raw and adjusted p of the claim the verdict makes, the minimal detectable
    change: of `vs`, a comparison of result `r`."""
    if vs is None:
        return ["—"] * 6
    return [published.published_cell(vs, r.higher_is_better, r.unit),
            *change_cells(vs, r.higher_is_better, r.unit), numbers.p(verdict_p(vs)),
            numbers.p(adjusted_p(vs, correction)), mdc_cell(vs)]


def other_label(vs) -> str:
    """The environment cell of a further comparison's row: `↳ vs REF`."""
    return f"↳ vs {vs.reference}"

