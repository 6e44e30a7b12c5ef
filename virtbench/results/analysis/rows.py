"""A run's stored samples as rows: per (environment, benchmark, metric) its values by block,
the order each ran in inside its block, and the trials left out as disturbed. Pure.

Blocks: the plan runs randomised blocks (study.plan): block t holds every (environment,
benchmark) once, in a shuffled order, as trial t (trials.trial, from 0); trials.seq is the
run order, so inside a block the smaller seq ran first.

Disturbed trials: the runner marks a trial whose host was disturbed while it ran (steal
time, run-queue length, the measured process's CPU share over the trial) by writing
`"disturbed": "<why>"` into trials.detail. Such a trial stays in the store; its samples are
left out of every statistic of its row (the published trimmed mean too), and the row lists it
(Result.disturbed) with its reason; a comparison counts the blocks it lost that way
(VsReference.disturbed_excluded)."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ...foundations.model import DisturbedTrial

Key = tuple[str, str, str]          # (environment, benchmark, metric)


@dataclass
class Row:
    values: list[float] = field(default_factory=list)        # kept samples, run order
    trials: list[int] = field(default_factory=list)          # their trial numbers, from 1
    by_block: dict[int, float] = field(default_factory=dict)  # block (trial from 0) -> value
    seq: dict[int, int] = field(default_factory=dict)         # block -> run order
    disturbed: list[DisturbedTrial] = field(default_factory=list)
    unit: str = ""
    higher_is_better: bool = True

    @property
    def disturbed_blocks(self) -> set[int]:
        return {d.trial - 1 for d in self.disturbed}


def disturbed_trials(trials: list[dict]) -> dict[tuple[str, str, int], str]:
    """(environment, benchmark, trial from 0) -> why, for every successful trial whose
    detail says it was disturbed."""
    out = {}
    for t in trials:
        why = (t.get("detail") or {}).get("disturbed")
        if t.get("status", "ok") == "ok" and why:
            # the runner records {"reason": ..., the figures judged}; older rows a reason
            reason = why.get("reason", str(why)) if isinstance(why, dict) else str(why)
            out[(t["environment"], t["benchmark"], t["trial"])] = reason
    return out


def rows_of(samples: list[dict], disturbed: dict[tuple[str, str, int], str]) -> dict[Key, Row]:
    """Every (environment, benchmark, metric) of the samples, in the samples' order."""
    rows: dict[Key, Row] = defaultdict(Row)
    for s in samples:
        key = (s["environment"], s["benchmark"], s["metric"])
        row = rows[key]
        row.unit, row.higher_is_better = s["unit"], bool(s["higher_is_better"])
        trial = s.get("trial")
        if trial is None:                   # a store-like source without trial numbers
            trial = len(row.trials) + len(row.disturbed)
        why = disturbed.get((key[0], key[1], trial))
        if why is not None:
            row.disturbed.append(DisturbedTrial(trial=trial + 1, value=s["value"], reason=why))
            continue
        row.values.append(s["value"])
        row.trials.append(trial + 1)
        row.by_block[trial] = s["value"]
        if s.get("seq") is not None:
            row.seq[trial] = s["seq"]
    return dict(rows)


def lost_blocks(row: Row, ref: Row) -> int:
    """Blocks a comparison of `row` with `ref` lost to disturbed trials: those where either
    side's trial was disturbed and the other side ran."""
    mine, theirs = row.disturbed_blocks, ref.disturbed_blocks
    ran_row = set(row.by_block) | mine
    ran_ref = set(ref.by_block) | theirs
    return len({b for b in mine | theirs if b in ran_row and b in ran_ref})


def env_first(row: Row, ref: Row) -> dict[int, bool] | None:
    """block -> whether the environment ran before its reference, for the blocks both ran
    in; None when the order is not stored."""
    common = set(row.by_block) & set(ref.by_block)
    if not all(b in row.seq and b in ref.seq for b in common):
        return None
    return {b: row.seq[b] < ref.seq[b] for b in common}
