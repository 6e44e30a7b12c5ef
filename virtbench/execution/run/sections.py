"""Measured sections long enough to measure: calibrate each benchmark case once per run, then
repeat its measured section inside every trial until the minimum is reached (pyperf's loops).

Before a case's first trial, CALIBRATION_RUNS calibration runs of it (not trials: never
stored as such, never in the statistics) measure its section (benchmarks.repetition.
section_s) in the reference environment when that can run it, else in the environment about
to; the shortest counts (the least disturbed: a calibration on a busy moment would give too
few repetitions for a quiet one). The loop
count k = ceil(minimum / section) (at most MAX_REPETITIONS) is then fixed for the case in
every environment for the whole run, and stored in the run's detail ("calibration"), so
that `--resume` repeats it the same way. A trial then runs the benchmark k times in a row,
and goes on repeating while its sections together are still short of the minimum (a
calibration on a slower moment or in a slower environment: 13 x 0.039 s planned, 0.478 s
measured), up to MAX_REPETITIONS; it reports per repetition (benchmarks.repetition.combine).
A group of instances runs once (its aggregate, spread and fairness relate its instances at
one moment). Only benchmarks whose tools stamp their measured blocks (`timed` metrics: our
kernels) are calibrated; the others run once per trial. virtbench never warns about a
choice it made itself: a `short_section` warning (once per environment and case) says only
that a section could not be repeated to the minimum: a group of instances, or the cap.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

from ...core import defaults
from ...measure.benchmarks.repetition import combine, repetitions_for, section_s
from ...core.errors import AgentError
from ...core.outcome import TrialOutcome

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


def more_needed(sections: list[float | None], k: int, min_section_s: float,
                most: int = MAX_REPETITIONS) -> bool:
    """After `sections` (one per repetition so far, None when unknown), is one more
    repetition due? The k planned first; then more while every section is known and they
    sum to less than `min_section_s` (0: none more), `most` at the most."""
    n = len(sections)
    if n < max(1, k):
        return True
    if min_section_s <= 0 or n >= most or None in sections:
        return False
    return sum(sections) < min_section_s - 1e-9        # 5 x (100.1 - 100.0) reaches 0.5


def run_repeated(run_once: Callable[[], TrialOutcome], bench, metrics, k: int,
                 lost: Callable[[AgentError], TrialOutcome], min_section_s: float = 0.0,
                 most: int = MAX_REPETITIONS) -> TrialOutcome:
    """`run_once` k times in a row, and more while the sections are short of
    `min_section_s` (more_needed), stopping at the first that fails, as one outcome. An
    agent lost in a repetition fails the trial with what the earlier ones measured."""
    outcomes: list[TrialOutcome] = []
    sections: list[float | None] = []
    while more_needed(sections, k, min_section_s, most):
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
                  min_section_s: float, repeatable: bool = True,
                  most: int = MAX_REPETITIONS) -> str | None:
    """The `short_section` message for a successful trial whose sections together lasted
    less than the minimum because they could not be repeated to it: a group of instances
    (`repeatable` False: run once per trial) or the cap of `most` repetitions. None
    otherwise: a short section virtbench could have repeated is its own doing, never a
    warning (run_repeated repeats it), nor one whose length is unknown."""
    total = outcome.detail.get("section_s")
    if not outcome.ok or total is None or min_section_s <= 0 or total >= min_section_s:
        return None
    k = outcome.detail.get("repetitions", 1)
    if repeatable and k < most:
        return None
    why = (f"the cap of {most} repetitions was reached" if repeatable else
           "a group of instances runs its section once per trial")
    return (f"{case} on {environment}: the measured section lasted {total:.3g} s per trial "
            f"({k} repetition(s)), below the minimum of {min_section_s:g} s ({why}): timer "
            "and scheduler noise weigh on its figures; give the benchmark a larger size")
