"""Which fingerprint facts changed between two runs of a series: the fact finder's answer
(analysis/differences.py, whose rule applies: one environment in two runs is the same kind,
so every fact counts, and a fact recorded in one run only is no change).

Each side is the environment as a report holds it (kind, spec, options, metadata) with its
run's host facts under `host` (series.py puts them there)."""
from __future__ import annotations

from ..analysis.facts import differences
from ...foundations.model import PairDifferences
from ...foundations.model.history import HistoryFact


def between(label: str, before: dict, after: dict) -> PairDifferences:
    """What differs in `label` from one run (`before`) to the next (`after`)."""
    return differences.pair(label, label, before, after, before.get("host"), after.get("host"))


def changed_facts(before: dict, after: dict, where: str = "environment") -> list[HistoryFact]:
    """The facts that differ between two runs of one environment; pure."""
    found, _ = differences.differ(before, after, before.get("host"), after.get("host"))
    return [HistoryFact(key=f.key, name=f.name, words=f.words, option=f.option, where=where,
                        before=f.a, after=f.b) for f in found]
