"""The runner's session: everything a run has while it runs, in one object.

A session is one start or resume of a run, from its plan to its end: the run's id, the
prepared plan, the keeper of its environments, the slot executor (the only place a trial is
stored), the tracker (what it is doing and how many trials it recorded, for a store that
goes away), the tally (the trials done and failed), the progress line, and when it began
(adaptive trials' budget counts this session's time from there). The runner makes it in one
place (Runner._session) and hands it on. The adaptive loop and duet mode take it as the
narrow interface each declares in its own module (adaptive.Blocks: run these slots, the time
spent, the run's environments lost; duet.Pairs: the slot executor's ready, measure and
record, the keeper's pinning), and import nothing of the runner, of this module or of the
executor.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from rich.console import Console
from rich.markup import escape
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)

from ...foundations.store import Store
from ...study.design import PlannedTrial
from .duet import run_duet
from .execute import SlotExecutor, Tracker, trial_name
from .keeper import Keeper
from .prepare import Prepared


@dataclass
class RunTally:
    """What executing a run came to: its status and the trials done, failed and (resumed)
    already stored."""
    run_id: str
    status: str
    done: int = 0
    failed: int = 0
    skipped_before: int = 0
    failed_profiles: int = 0     # --profile exits: profiles that could not be taken


class TrialBar:
    """The progress line: the plan's trials (those already stored counted done), those
    adaptive blocks add, and what runs now; shown while it is entered (`with bar:`)."""

    def __init__(self, console: Console, total: int, completed: int, show: bool = True):
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TextColumn("elapsed"),
                                 TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
                                 console=console, disable=not show, transient=False)
        self.task = self.progress.add_task("trials", total=total, completed=completed)

    def __enter__(self) -> "TrialBar":
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()

    def add(self, n: int) -> None:
        """`n` trials the plan did not count (an adaptive block)."""
        self.progress.update(self.task, total=self.progress.tasks[self.task].total + n)

    def describe(self, text: str) -> None:
        self.progress.update(self.task, description=escape(text))

    def advance(self) -> None:
        self.progress.advance(self.task)

    @property
    def counts(self) -> tuple[int, int]:
        """(trials done, the stored ones included; trials in all, adaptive blocks included)."""
        task = self.progress.tasks[self.task]
        return int(task.completed), int(task.total or 0)


@dataclass
class RunSession:
    """One session of a run (module docstring): made by the runner, handed on."""
    run_id: str
    prepared: Prepared
    store: Store
    console: Console
    keeper: Keeper
    executor: SlotExecutor
    tracker: Tracker
    tally: RunTally
    bar: TrialBar
    started: float                       # clock() when the session began
    clock: Callable[[], float]
    # after each slot that ran, once counted: the runner's hook (a fleet worker reports it)
    on_slot: Callable[["RunSession", PlannedTrial, bool], None]

    # -- running slots -------------------------------------------------------------------
    def run_slots(self, slots: list[PlannedTrial], extra: bool = False) -> None:
        """Run `slots` in order (duet mode: each block's pairs at once); `extra`: slots the
        plan did not count (adaptive blocks), added to the progress line's total."""
        if extra:
            self.bar.add(len(slots))
        if self.prepared.study.duet:
            run_duet(self, slots)
            return
        for slot in slots:
            self.describe(f"{slot.environment} · {slot.benchmark} {trial_name(slot.trial)}")
            self.slot_ran(slot, self.executor.run(slot))

    def slot_ran(self, slot: PlannedTrial, ok: bool) -> None:
        """Count a slot that ran (whatever its mode) and move the progress line on."""
        self.tally.done += 1
        if not ok and slot.trial >= 0:
            self.tally.failed += 1
        self.bar.advance()
        self.on_slot(self, slot, ok)

    # -- what it says --------------------------------------------------------------------
    def describe(self, text: str) -> None:
        """The progress line's description (what runs, what is still undecided)."""
        self.bar.describe(text)

    def say(self, text: str) -> None:
        """One line to the console, as it is (no markup)."""
        self.console.print(escape(text), highlight=False)

    # -- what it knows -------------------------------------------------------------------
    def spent_s(self) -> float:
        """This session's time so far."""
        return self.clock() - self.started

    @property
    def slots_run(self) -> int:
        """The slots this session ran so far."""
        return self.tally.done

    @property
    def dead(self) -> Mapping[str, str]:
        """The run's environments whose trials fail now (restarted too often), and why."""
        return self.keeper.dead
