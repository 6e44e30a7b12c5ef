"""The report's lists, one line an item: warnings, undecided comparisons, notes, claims."""
from __future__ import annotations

from ..words import warning_groups as grouping
from ....core.decisions import ClaimStatus, Decided
from ....foundations.model import Result, RunReport, RunWarning, WarningGroup
from . import verdicts

# how much a text report says (`--quiet`, `--verbose`): quiet, the header and the verdicts,
# the warnings as one line of counts; normal, the warnings one line per kind; verbose, every
# warning with its raw details
VERBOSITIES = ("quiet", "normal", "verbose")


def where(w: RunWarning) -> str:
    """`environment · benchmark · metric` of a warning, those it names."""
    return " · ".join(x for x in (w.environment, w.benchmark, w.metric) if x)


def groups(analysis: RunReport) -> list[WarningGroup]:
    """The warnings one group per kind: the report's, or made now for a report that has
    none (a JSON report of schema 3.0)."""
    if analysis.warning_groups or not analysis.warnings:
        return analysis.warning_groups
    return grouping.groups(analysis.warnings, grouping.Host.of(analysis))


def warning_count_line(analysis: RunReport) -> str | None:
    """`--quiet`: how many warnings of which kinds, in one line; None without any."""
    if not analysis.warnings:
        return None
    made = groups(analysis)
    n = len(analysis.warnings)
    return (f"{n} warning{'s' if n != 1 else ''} ("
            + ", ".join(f"{g.count} {g.kind}" for g in made) + "): --verbose lists them")


def warning_lines(w: RunWarning) -> list[str]:
    """`--verbose`: one warning, then its raw detail on the next line when it has one."""
    head = f"{w.kind} {where(w)}: {w.message}" if where(w) else f"{w.kind}: {w.message}"
    return [head] + ([f"  detail: {w.detail}"] if w.detail else [])


def inconclusive(analysis: RunReport) -> list[tuple[Result, object]]:
    """(result, comparison) of every comparison the samples could not decide."""
    return [(r, vs) for r in analysis.results for vs in verdicts.comparisons(r)
            if vs.verdict == Decided.INCONCLUSIVE]


def inconclusive_lines(analysis: RunReport) -> list[str]:
    baseline = analysis.run.baseline
    return [f"{r.environment} · {r.benchmark} · {r.metric}"
            + (f" vs {vs.reference}" if vs.reference != baseline else "") + f": {vs.message}"
            for r, vs in inconclusive(analysis)]


def method_note_lines(analysis: RunReport) -> list[str]:
    return [f"{m.benchmark}: {m.note}" for m in analysis.method_notes]


CLAIM_MARKS = {status: f"{mark} {status}" for status, mark in (
    (ClaimStatus.HOLDS, "✓"), (ClaimStatus.NOT_HOLDS, "✗"), (ClaimStatus.INCONCLUSIVE, "?"),
    (ClaimStatus.NOT_MEASURED, "—"))}


def claim_lines(analysis: RunReport) -> list[str]:
    """One line per claim of the study: its status, the claim, where, and why."""
    return [f"{CLAIM_MARKS.get(c.status, c.status)}: {c.text} ({c.source}; {c.benchmark} · "
            f"{c.metric}: {c.holds_if}) — {c.message}" for c in analysis.claims]

