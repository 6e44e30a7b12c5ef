"""The classifications every layer shares, one enum each: a row's decision against its
reference, the side it lies on, `virtbench compare`'s verdict, a claim's status, a tune's
knob's effect.

Each is a string enum: a member is its word (`Decided.PASS == "pass"`, `str()` and JSON
give the word), so the result model stores and the JSON report writes the same strings as
before (docs/report.schema.json), and code compares through the enum, never with a string
literal (tests/unit/core/test_decided_words.py). How each is said to a reader is the report
layer's (virtbench/results/report/words/).
"""
from __future__ import annotations

from enum import StrEnum


class Decided(StrEnum):
    """The decision of a row against its reference (docs/decisions.md; the rule is
    virtbench/foundations/stats/decision.py): equivalent, a real difference inside the band,
    beyond the band, or not decided by these blocks."""

    PASS = "pass"
    DIFFERS = "differs, within threshold"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"


class Direction(StrEnum):
    """Which side of its reference a value lies on: more overhead (worse) or less (better),
    whatever the metric's own direction."""

    WORSE = "worse"
    BETTER = "better"


class CompareVerdict(StrEnum):
    """Run B against run A on one metric (`virtbench compare`; stats/change.py): worse or
    better beyond the minimum change, the same, or not decided."""

    WORSE = "worse"
    BETTER = "better"
    SAME = "same"
    INCONCLUSIVE = "inconclusive"


class ClaimStatus(StrEnum):
    """A published claim checked on a run (stats/claims.py, results/analysis/claims.py)."""

    HOLDS = "holds"
    NOT_HOLDS = "does not hold"
    INCONCLUSIVE = "inconclusive"
    NOT_MEASURED = "not measured"


class KnobEffect(StrEnum):
    """A tune's knob (or interaction) on one metric (stats/screening/effects.py, docs/tune.md):
    beyond the smallest effect that matters, within it (equivalence), or not decided."""

    MATTERS = "matters"
    NO_EFFECT = "no effect"
    UNDECIDED = "undecided"
