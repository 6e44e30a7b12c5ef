"""What differs between each environment and its reference, as lines: one per pair (the
compact text), each fact under it (--wide, Markdown, HTML). Pure."""
from __future__ import annotations

from ....foundations.model import PairDifferences, RunReport

TITLE = "what differs from the reference"


def detail(p: PairDifferences) -> list[str]:
    """Every fact that differs, then what one side does not record."""
    out = [f.words + (" (host)" if f.layer == "host" else "") for f in p.facts]
    if p.unrecorded:
        out.append("recorded on one side only: " + ", ".join(p.unrecorded))
    return out


def lines(report: RunReport, wide: bool = False) -> list[str]:
    """One line per environment and reference; with `wide`, each fact indented under a line
    that has more than it says."""
    out = []
    for p in report.differences:
        out.append(p.line)
        if wide and (len(p.facts) > 1 or p.unrecorded):
            out += ["  " + line for line in detail(p)]
    return out
