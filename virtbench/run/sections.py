"""Measured sections long enough to measure: calibrate each benchmark case once per run, then
repeat its measured section inside every trial until the minimum is reached (pyperf's loops).

Before a case's first trial, CALIBRATION_RUNS calibration runs of it (not trials: never
stored as such, never in the statistics) measure its section (benchmarks.repetition.
section_s) in the reference environment when that can run it, else in the environment about
to; the shortest counts (the least disturbed: a calibration on a busy moment would give too
few repetitions for a quiet one). The loop
count k = ceil(minimum / section) (at most MAX_REPETITIONS) is then fixed for the case in
every environment for the whole run, and stored in the run's detail ("calibration"), so
that `--resume` repeats it the same way. A trial then runs the benchmark k times in a row
and reports per repetition (benchmarks.repetition.combine); a group of instances runs once
(its aggregate, spread and fairness relate its instances at one moment). Only benchmarks whose tools
stamp their measured blocks (`timed` metrics: our kernels) are calibrated; the others run
once per trial. A trial whose k sections together still fall short of the minimum (a
calibration in a slower environment, the cap, a section far shorter than the timer's
resolution) gets a `short_section` warning, once per environment and case.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

from ..core import defaults
from ..benchmarks.repetition import combine, repetitions_for, section_s
from ..core.errors import AgentError
from ..core.outcome import TrialOutcome

MAX_REPETITIONS = defaults.MAX_REPETITIONS
CALIBRATION_RUNS = 3


@dataclass
class Calibration:
    repetitions: int
    section_s: float | None        # the shortest calibration run's section, one repetition
    environment: str
    min_section_s: float
    capped: bool = False           # k stopped at MAX_REPETITIONS short of the minimum

    def to_dict(self) -> dict:
        return asdict(self)


def calibrated(bench) -> bool:
    """Is `bench` one whose section is known (its tool stamps its measured blocks)?"""
    return bool(getattr(bench, "timed", ()))


def calibration_of(section: float | None, environment: str, min_section_s: float,
                   most: int = MAX_REPETITIONS) -> Calibration:
    k = repetitions_for(section, min_section_s, most)
    capped = section is not None and k == most and section * k < min_section_s
    return Calibration(k, None if section is None else round(section, 6), environment,
                       min_section_s, capped)


def run_repeated(run_once: Callable[[], TrialOutcome], bench, metrics, k: int,
                 lost: Callable[[AgentError], TrialOutcome]) -> TrialOutcome:
    """`run_once` k times in a row, stopping at the first that fails, as one outcome. An
    agent lost in a repetition fails the trial with what the earlier ones measured."""
    outcomes, sections = [], []
    for _ in range(max(1, k)):
        try:
            outcome = run_once()
        except AgentError as exc:
            outcome = lost(exc)
        outcomes.append(outcome)
        sections.append(section_s(bench, outcome.stdout) if outcome.ok else None)
        if not outcome.ok:
            break
    return combine(outcomes, metrics, sections)


def short_warning(case: str, environment: str, outcome: TrialOutcome,
                  min_section_s: float) -> str | None:
    """The `short_section` message for a successful trial whose sections together lasted
    less than the minimum; None otherwise (or when its section is unknown)."""
    total = outcome.detail.get("section_s")
    if not outcome.ok or total is None or min_section_s <= 0 or total >= min_section_s:
        return None
    k = outcome.detail.get("repetitions", 1)
    return (f"{case} on {environment}: the measured section lasted {total:.3g} s per trial "
            f"({k} repetition(s)), below the minimum of {min_section_s:g} s: timer and "
            "scheduler noise weigh on its figures; give the benchmark a larger size, or "
            "raise the repetitions with a larger --min-section")
