"""Two runs side by side: a row's verdict, rows one run has, metadata that differ."""
from __future__ import annotations

from ....core.decisions import CompareVerdict
from ....foundations.model import CompareRow, Comparison
from ..words import change


def change_cells(r: CompareRow) -> list[str]:
    """The change from A to B and its 95 % interval, as words/change.py says them in a cell."""
    said = change.said(r.ratio, r.higher_is_better, r.unit, r.change_pct)
    span = said.interval(*change.ratio_interval(r, r.higher_is_better), r.higher_is_better)
    return [said.cell(), span or "n/a"]


def compare_verdict(r: CompareRow) -> str:
    """A comparison row's verdict, with the trials per side an inconclusive one needs."""
    return r.verdict + (f" (≥ {r.trials_needed} trials)"
                        if r.verdict == CompareVerdict.INCONCLUSIVE and r.trials_needed else "")


def compare_undecided(comparison: Comparison) -> list[CompareRow]:
    return [r for r in comparison.rows
            if r.verdict == CompareVerdict.INCONCLUSIVE and r.message]


def only_in(comparison: Comparison) -> list[tuple[str, list[list[str]]]]:
    """(side, [environment, benchmark, metric]...) of the rows only one run has."""
    return [("A", comparison.only_in_a), ("B", comparison.only_in_b)]


def difference_lines(comparison: Comparison) -> list[str]:
    """One line per run-level key that differs (quick, host name, a benchmark's parameters),
    then one per paired environment whose facts differ (its PairDifferences line; a
    comparison made before those were kept: one per fact)."""
    out = [f"{d.key}: {d.a!r} → {d.b!r}" for d in comparison.metadata_differences
           if not d.environment]
    if comparison.differences:
        return out + [p.line for p in comparison.differences
                      if p.facts or p.unrecorded or p.kinds]
    return out + [f"{d.environment}: {d.key}: {d.a!r} → {d.b!r}"
                  for d in comparison.metadata_differences if d.environment]

