"""The series' changes (stats/changes.py) found and put into the history's result model:
fact points from the fingerprint facts that changed (facts.changed_facts: the fact finder's),
the family's correction over every fact point of every series, each change with its facts
and, when several options changed at once, the study that separates them."""
from __future__ import annotations

import json

from ...core.decisions import Direction
from ...foundations.model.history import HistoryChange, HistoryFact, HistorySeries
from ...foundations.stats import changes
from ..analysis.facts.separate import separating_study_between
from .facts import between, changed_facts
from .series import Line


def facts_at(line: Line, i: int) -> list[HistoryFact]:
    """The facts that changed between point i - 1 and point i of `line` (its environment's
    and, for a ratio series, its reference's)."""
    found = changed_facts(line.envs[i - 1], line.envs[i])
    if line.key.kind == "ratio" and line.refs[i - 1] is not None and line.refs[i] is not None:
        found += changed_facts(line.refs[i - 1], line.refs[i], where="reference")
    return found


def detect_all(lines: list[Line], threshold_pct: float, alpha: float, correction: str
               ) -> tuple[list[HistorySeries], int]:
    """Every series with its changes, and the number of fact points tested together."""
    facts = [{i: facts_at(line, i) for i in range(1, len(line.points))} for line in lines]
    found = [changes.detect([p.value if p.value is not None else 0.0 for p in line.points],
                            [i for i, f in fs.items() if f], line.higher_is_better,
                            threshold_pct, alpha)
             for line, fs in zip(lines, facts)]
    settled = changes.settle(found, correction)
    tested = sum(1 for s in settled for c in s.changes
                 if c.kind == changes.FACT and c.decision is not None
                 and c.decision.p_value is not None)
    return [_series(line, s, fs, correction, threshold_pct, alpha)
            for line, s, fs in zip(lines, settled, facts)], \
        tested


def _series(line: Line, found: changes.SeriesChanges, facts: dict[int, list[HistoryFact]],
            correction: str, threshold_pct: float, alpha: float) -> HistorySeries:
    k, noise = line.key, found.noise
    note = None
    if found.no_log is not None:
        run = line.points[found.no_log.index].run
        note = (f"run {run} has {found.no_log.value:g}: a value of 0 or below has no "
                "logarithm, so this series has no detection")
    elif noise.sigma is None:
        note = f"{len(line.points)} run(s): a series needs {changes.MIN_RUNS} for its noise " \
               "and a search"
    return HistorySeries(
        kind=k.kind, host=k.host, environment=k.environment, reference=k.reference,
        benchmark=k.benchmark, params=json.loads(k.params), quick=k.quick, metric=k.metric,
        unit=line.unit, higher_is_better=line.higher_is_better, runs=len(line.points),
        noise_floor_pct=noise.floor_pct, mde_pct=noise.mde_pct,
        drift_mde_pct=noise.drift_mde_pct, note=note, points=line.points,
        changes=[_change(line, c, facts.get(c.index, []), correction, threshold_pct, alpha)
                 for c in found.changes])


def _change(line: Line, c: changes.Change, facts: list[HistoryFact], correction: str,
            threshold_pct: float, alpha: float) -> HistoryChange:
    d = c.decision
    adjusted = None if d is None else (d.p_holm if correction == "holm" else d.p_bh)
    return HistoryChange(
        run=line.points[c.index].run, index=c.index, kind=c.kind, status=c.status,
        runs_before=c.runs_before, runs_after=c.runs_after,
        ratio=d.estimate if d else None, change_pct=d.overhead_pct if d else None,
        ci_low=d.ci_low if d else None, ci_high=d.ci_high if d else None,
        p_value=d.p_value if d else None, p_adjusted=adjusted,
        decision=d.decision if d and d.estimate is not None else None,
        size=changes.size_word(d) if c.status in (changes.CONFIRMED, changes.SUSPECTED)
        else "", direction=c.direction if c.status != changes.NO_CHANGE else None,
        regression=c.status == changes.CONFIRMED and c.direction == Direction.WORSE,
        facts=facts, **_separation(line, c.index, threshold_pct, alpha), reason=c.reason)


def _separation(line: Line, i: int, threshold_pct: float, alpha: float) -> dict:
    """When more than one change was made at point i of the environment: the options that
    made them (`separate`) and the study that takes them apart (`study`)."""
    before, after = line.envs[i - 1], line.envs[i]
    diff = between(line.key.environment, before, after)
    if diff.changes < 2 or not diff.separable:
        return {"separate": [], "study": None}
    cases = [line.case] if line.case is not None else []
    return {"separate": list(diff.separable),
            "study": separating_study_between(line.key.environment, before, after, diff, cases,
                                              threshold_pct, alpha,
                                              f"run {line.points[i].run}")}
