"""The runner: turns a study into stored trials.

prepare() (execution/run/prepare.py) checks everything that can be checked before anything
runs (exit 2, nothing stored); the Runner stores the run, plans it, opens its session
(execution/run/session.py: everything the run has while it runs, made in one place) and
runs it: environments started as the plan first needs them, each planned trial run through
the environment's agent and stored with its samples the moment it ends, then adaptive
blocks, a tune's confirmation (execution/run/tune.py) and exit profiles, and every
environment stopped on the way out, whatever happened.
A Runner holds only what it was made with; whatever a run has while it runs is its session's.
"""
from __future__ import annotations

import random
import signal
import socket
import time
from typing import Callable

from rich.console import Console
from rich.markup import escape

from ... import __version__
from ...machinery.kernels import build as kernels
from ...machinery.host import runproc
from . import warmup
from .execute import SlotExecutor, Tracker, lost_outcome
from .keeper import Keeper
from .prepare import (Prepared, check_modes, check_tools, estimate_s, prepare, skip_line,
                      skipped_cases)
from .session import RunSession, RunTally, TrialBar
from ...study.reach import reach_note
from .sections import Calibration
from ...foundations.store import Store, StoreUnavailable, jsonable
from ...study.design import PlannedTrial, plan, study_to_resume


def _raise_interrupt(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


class Runner:
    def __init__(self, store: Store, console: Console | None = None, show_progress: bool = True,
                 host: str | None = None, fleet: str | None = None, series: str | None = None,
                 clock: Callable[[], float] = time.monotonic):
        """host names the machine in the run (default: its hostname; a fleet worker passes
        its --name); fleet is the fleet run this run belongs to; series the named series a
        new run is tagged into (`run --series`); clock what a session's time is read from
        (adaptive trials' budget; tests give their own)."""
        self.store = store
        self.series = series
        self.host = host or socket.gethostname()
        self.fleet = fleet
        self.console = console or Console(stderr=True)
        self.show_progress = show_progress
        self.clock = clock

    # -- entry points --------------------------------------------------------------------
    def start(self, prepared: Prepared, detail: dict | None = None) -> RunTally:
        """A new run of `prepared`; `detail`: what else its detail says from the start (a
        replay: the artifact and run it replays)."""
        seed = prepared.study.seed
        prepared = prepared.for_run(seed if seed is not None
                                    else random.SystemRandom().randrange(2**31))
        study = prepared.study
        run_id = self.store.create_run(study.to_dict(), seed=study.seed, quick=study.quick,
                                       version=__version__, host=self.host, fleet=self.fleet,
                                       series=self.series)
        self.store.update_run_detail(run_id, kernels_build=kernels.identity(), **(detail or {}))
        for label, env in prepared.envs.items():
            options = {**env.values, **({"name": env.name} if env.name else {})}
            self.store.upsert_environment(run_id, label, kind=env.kind, spec=str(env.spec),
                                          options=jsonable(options), status="planned")
        for spec, why in prepared.skipped:
            self.store.add_warning(run_id, "environment_skipped", f"{spec}: {why}", environment=spec)
        for env, case, why in prepared.skipped_cases:
            self.store.add_warning(run_id, "benchmark_skipped", skip_line(env, case, why),
                                   environment=env, benchmark=case)
        return self._execute(run_id, prepared)

    def resume(self, run_id: str, retry_failed: bool = False) -> RunTally:
        """Run the slots the run is missing; with retry_failed also those whose trial failed
        (the failed rows are kept as superseded_trials)."""
        prepared = prepare(study_to_resume(self.store.get_run(run_id)))
        if retry_failed:
            n = self.store.supersede_failed(run_id)
            self.console.print(f"retrying {n} failed trial(s) of run {run_id}")
        return self._execute(run_id, prepared)

    # -- the loop ------------------------------------------------------------------------
    def _execute(self, run_id: str, prepared: Prepared) -> RunTally:
        """The plan's missing slots; a store that goes away ends the run in one line (exit 3)
        saying how to resume it: every trial committed before stays, exactly once."""
        tracker = Tracker()
        try:
            return self._execute_plan(run_id, prepared, tracker)
        except StoreUnavailable as exc:
            raise exc.resumable(run_id, tracker.doing, tracker.recorded) from None

    def _execute_plan(self, run_id: str, prepared: Prepared, tracker: Tracker) -> RunTally:
        """Plan the run (warm-ups included), say what it will do, open its session and run
        what is missing."""
        started = self.clock()          # adaptive trials' budget counts from here
        study = prepared.study
        slots = warmup.with_warmups(
            plan(list(prepared.envs), list(prepared.cases), study.trials, study.seed,
                 skip=prepared.skip),
            warmup.count(study))
        done = self.store.done_slots(run_id)
        tracker.recorded = len(done)
        todo = [s for s in slots if (s.environment, s.benchmark, s.trial) not in done]
        tally = RunTally(run_id=run_id, status="running", skipped_before=len(slots) - len(todo))
        self._say_skipped(prepared)
        self.store.set_run_status(run_id, "running", finished=False)
        # who runs it (host, boot, pid, start time): `virtbench runs` tells a killed run by it
        self.store.update_run_detail(run_id, **{runproc.DETAIL_KEY: runproc.this_process()})
        self._announce(prepared, tally)
        session = self._session(prepared, tally, tracker, started, len(slots))
        return self._run_session(session, todo)

    def _session(self, prepared: Prepared, tally: RunTally, tracker: Tracker, started: float,
                 total: int) -> RunSession:
        """The session of the run `tally` counts, whose plan has `total` slots: everything
        it has while it runs, made here and only here."""
        run_id = tally.run_id
        keeper = Keeper(prepared.envs, self.store, run_id, self.console, pin=prepared.study.pin)
        detail = self.store.get_run(run_id).get("detail") or {}
        executor = SlotExecutor(self.store, run_id, prepared, keeper, self.console, tracker,
                                stored_calibrations(detail))
        bar = TrialBar(self.console, total, tally.skipped_before, show=self.show_progress)
        return RunSession(run_id=run_id, prepared=prepared, store=self.store,
                          console=self.console, keeper=keeper, executor=executor,
                          tracker=tracker, tally=tally, bar=bar, started=started,
                          clock=self.clock, on_slot=self.slot_ran)

    def _say_skipped(self, prepared: Prepared) -> None:
        """One line per environment and per case the run leaves out."""
        for spec, why in prepared.skipped:
            self.console.print(f"[yellow]skipping[/] environment {escape(spec)}: {escape(why)}",
                               highlight=False)
        for env, case, why in prepared.skipped_cases:
            self.console.print(f"[yellow]skipping[/] {escape(skip_line(env, case, why))}",
                               highlight=False)

    def _announce(self, prepared: Prepared, outcome: RunTally) -> None:
        """The run's first line (its size) and what its plan cannot decide."""
        study = prepared.study
        self.console.print(f"[bold]run {outcome.run_id}[/]: {len(prepared.envs)} environment(s) x "
                           f"{len(prepared.cases)} benchmark(s) x {study.trials_text} trial(s)"
                           + (" in duet" if study.duet else "")
                           + (f", {len(prepared.skipped_cases)} case(s) skipped"
                              if prepared.skipped_cases else "")
                           + (f", {outcome.skipped_before} already done" if outcome.skipped_before else "")
                           + (" [yellow](quick sizes)[/]" if study.quick else ""))
        note = reach_note(prepared)
        if note:
            self.console.print(f"[yellow]note[/]: {escape(note)}", highlight=False)

    def _run_session(self, session: RunSession, todo: list[PlannedTrial]) -> RunTally:
        """Run the slots still to do (then adaptive blocks and exit profiles) in `session`;
        an interrupt ends it resumable; its environments are stopped whatever happens."""
        run_id, study, outcome = session.run_id, session.prepared.study, session.tally
        old_term = signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            with session.bar:
                session.run_slots(todo)
                if study.adaptive and study.tune is None:
                    from .adaptive import AdaptiveLoop
                    AdaptiveLoop(session).run()
                if study.tune is not None:
                    self._tune(session)
            if study.profile == "exits":
                session.tracker.doing = "the exit profiles"
                from .profiled import profile_exits
                outcome.failed_profiles = profile_exits(self.store, run_id, session.prepared,
                                                        session.keeper, self.console)
        except KeyboardInterrupt:
            outcome.status = "interrupted"
            self.store.set_run_status(run_id, "interrupted")
            self.console.print(f"[yellow]interrupted[/]: {outcome.done} trial(s) of this session "
                               f"stored; finish with `virtbench run --resume {run_id}`")
            return outcome
        finally:
            session.keeper.stop_all()
            signal.signal(signal.SIGTERM, old_term)
        outcome.status = "complete"
        session.tracker.doing = "the end of the run"
        self.store.set_run_status(run_id, "complete")
        return outcome

    @staticmethod
    def _tune(session: RunSession) -> None:
        """A tune's stages after its plan: the adaptive screening's blocks, the refinement,
        the confirmation (execution/run/tune.py, refine.py)."""
        from .refine import RefineStage
        from .tune import ConfirmStage, ScreeningLoop
        study = session.prepared.study
        if study.adaptive:
            session.tracker.doing = "the tune's screening"
            ScreeningLoop(session).run()
        if study.tune.refine:
            session.tracker.doing = "the tune's refinement"
            RefineStage(session).run()
        session.tracker.doing = "the tune's confirmation"
        ConfirmStage(session).run()

    def slot_ran(self, session: RunSession, slot: PlannedTrial, ok: bool) -> None:
        """After each slot that ran (the session counted it and moved its progress line on):
        a hook for a runner that reports its progress elsewhere (a fleet worker,
        execution/fleet/unit.py); the plain runner has nothing to add."""


def stored_calibrations(detail: dict) -> dict[str, Calibration]:
    """The run's calibrations as stored in its detail (a resumed run repeats them)."""
    out = {}
    for case, d in (detail.get("calibration") or {}).items():
        try:
            out[case] = Calibration(**d)
        except TypeError:
            continue               # a record this version does not read: calibrate again
    return out


__all__ = ["RunTally", "Prepared", "Runner", "lost_outcome", "prepare", "skip_line",
           "skipped_cases", "check_modes", "check_tools", "estimate_s", "stored_calibrations"]
