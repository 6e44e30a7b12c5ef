"""The report's lists, one line an item: warnings, undecided comparisons, notes, claims."""
from __future__ import annotations

from ...model import Result, RunReport, RunWarning
from . import verdicts


def where(w: RunWarning) -> str:
    """`environment · benchmark · metric` of a warning, those it names."""
    return " · ".join(x for x in (w.environment, w.benchmark, w.metric) if x)


def inconclusive(analysis: RunReport) -> list[tuple[Result, object]]:
    """(result, comparison) of every comparison the samples could not decide."""
    return [(r, vs) for r in analysis.results for vs in verdicts.comparisons(r)
            if vs.verdict == "inconclusive"]


def inconclusive_lines(analysis: RunReport) -> list[str]:
    baseline = analysis.run.baseline
    return [f"{r.environment} · {r.benchmark} · {r.metric}"
            + (f" vs {vs.reference}" if vs.reference != baseline else "") + f": {vs.message}"
            for r, vs in inconclusive(analysis)]


def method_note_lines(analysis: RunReport) -> list[str]:
    return [f"{m.benchmark}: {m.note}" for m in analysis.method_notes]


CLAIM_MARKS = {"holds": "✓ holds", "does not hold": "✗ does not hold",
               "inconclusive": "? inconclusive", "not measured": "— not measured"}


def claim_lines(analysis: RunReport) -> list[str]:
    """One line per claim of the study: its status, the claim, where, and why."""
    return [f"{CLAIM_MARKS.get(c.status, c.status)}: {c.text} ({c.source}; {c.benchmark} · "
            f"{c.metric}: {c.holds_if}) — {c.message}" for c in analysis.claims]

