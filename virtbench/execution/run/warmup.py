"""Warm-up trials (`warmup = N` in a study, default 1): per environment x benchmark, N trials
run just before its first measured trial, are stored with trial numbers -1, -2, ... and the
warmup flag, and never enter the statistics (the store leaves them out by default)."""
from __future__ import annotations

from ...study.design import PlannedTrial, Study


def count(study: Study) -> int:
    """The study's warm-up count per environment x benchmark."""
    return max(0, int(study.warmup))


def with_warmups(slots: list[PlannedTrial], n: int) -> list[PlannedTrial]:
    """Pure: the plan with `n` warm-up slots before each (environment, benchmark)'s first
    measured slot. Warm-ups get negative trial numbers and negative seq (-W .. -1 in the order
    they run), so the measured trials keep the plan's numbers."""
    out: list[PlannedTrial] = []
    seen: set[tuple[str, str]] = set()
    w = -n * len({(s.environment, s.benchmark) for s in slots}) - 1   # -W .. -1, in run order
    for slot in slots:
        key = (slot.environment, slot.benchmark)
        if key not in seen:
            seen.add(key)
            for k in range(n):
                w += 1
                out.append(PlannedTrial(seq=w, trial=-(k + 1), environment=slot.environment,
                                        benchmark=slot.benchmark))
        out.append(slot)
    return out


def planned_trials(study, n_envs: int, n_cases: int, skipped: int = 0) -> int:
    """Trials a run executes, warm-ups included (for --dry-run's estimate); `skipped`
    (environment, benchmark) cases run none."""
    return (study.trials + count(study)) * (n_envs * n_cases - skipped)
