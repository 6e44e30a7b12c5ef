"""The runner: turns a study into stored trials.

prepare() checks everything that can be checked before anything runs (exit 2, nothing
stored); execute() starts environments as the plan first needs them, runs each planned
trial through the environment's agent, stores every trial with its samples the moment it
ends, and stops every environment on the way out, whatever happened.
"""
from __future__ import annotations

import random
import signal
import socket
import time
from dataclasses import dataclass, field, replace
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)

from ... import __version__
from ...measure import benchmarks, environments
from ...machinery.kernels import build as kernels
from ...machinery.host import pinning, workroot
from ...machinery.host import tools as hosttools
from ...machinery.host import runproc
from ...study import targets
from . import warmup
from ...core.capabilities import cannot_run
from ...measure.environments import Environment
from ...core.errors import VirtbenchError
from .execute import SlotExecutor, Tracker, lost_outcome, trial_name
from .keeper import Keeper
from ...study.reach import reach_note
from .sections import Calibration
from ...foundations.store import Store, StoreUnavailable, jsonable
from ...study.baseline import Candidate, resolve_baseline
from ...study.design import (
    PlannedTrial,
    Study,
    plan,
    skipped_environments,
    study_to_resume,
    validate,
)


@dataclass
class Prepared:
    study: Study
    envs: dict[str, Environment]                 # label -> environment, in study order
    cases: dict[str, tuple[benchmarks.Benchmark, dict[str, Any]]]   # label -> (bench, params)
    baseline: str | None                         # resolved: a label of envs, or None
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (spec, why) not run here
    # (environment label, case label, why): cases the environment cannot run, left out
    skipped_cases: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def skip(self) -> set[tuple[str, str]]:
        return {(env, case) for env, case, _ in self.skipped_cases}

    @property
    def runnable(self) -> int:
        """(environment, benchmark) cases the plan runs."""
        return len(self.envs) * len(self.cases) - len(self.skipped_cases)

    def for_run(self, seed: int) -> "Prepared":
        """This plan with the study as a run stores it (and runs and reports it): its
        baseline resolved, its trial order's seed chosen; a copy, the study is frozen."""
        return replace(self, study=replace(self.study, baseline=self.baseline, seed=seed))


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


@dataclass
class ActiveRun:
    """The run a Runner is executing: its id, what was prepared for it, the keeper of its
    environments and its outcome so far. The adaptive loop and duet mode are handed it."""
    run_id: str
    prepared: Prepared
    keeper: Keeper
    outcome: RunTally


def prepare(study: Study, dry_run: bool = False) -> Prepared:
    """Validate the study and create (not start) its environments. Raises VirtbenchError.

    dry_run: the plan only; nothing is probed, resolved (no KVM probe boot) or built (no
    kernel, no image), so an accelerator chosen at run time shows as the spec gives it."""
    validate(study)
    if not dry_run:
        workroot.ensure()   # a work root we cannot trust is refused before anything is made
    named = targets.load_targets() if any(e.target for e in study.environments) else {}
    skipped = skipped_environments(study, named, str(targets.targets_path()))
    envs: dict[str, Environment] = {}
    candidates: list[Candidate] = []       # what the baseline may name: label or spec
    for entry in study.environments:
        if entry.target:
            if entry.target not in named:
                continue
            env = environments.create(named[entry.target])
            env.stands_for = entry.spec      # the study's environment it is measured as
        elif entry.requires:
            continue
        else:
            env = environments.create(entry.parsed())
        if env.name and env.name in envs:          # known before any probe: say it now
            raise _same_label(entry.spec, env.label)
        if not dry_run:
            usability = type(env).probe()
            if not usability.usable:
                raise VirtbenchError(f"environment {entry.spec}: not usable here: "
                                     f"{usability.reason}")
            env.resolve()
        if env.label in envs:
            raise _same_label(entry.spec, env.label)
        envs[env.label] = env
        candidates.append(Candidate(env.label, entry.spec))
    cases = {}
    for case in study.benchmarks:
        bench = benchmarks.get(case.name)
        cases[case.label] = (bench, bench.params(case.params, quick=study.quick))
    # a baseline named by its spec: its label depends on what resolve() settled (qemu-tcg/...
    # or qemu-kvm/...), which a study file cannot know; stored with the run (for_run)
    baseline = resolve_baseline(study.baseline, candidates, first_if_none=True)
    check_modes(study, envs, baseline)
    if not dry_run:
        check_tools(envs, cases)
    needs_kernels = any(set(b.tools) & set(kernels.KERNELS) for b, _ in cases.values())
    if needs_kernels and not dry_run:
        kernels.build()   # a missing compiler is bad input: fail before the run exists
    if not envs:
        raise VirtbenchError("no environment of this study can run here: " + "; ".join(
            f"{spec}: {why}" for spec, why in skipped))
    return Prepared(study, envs, cases, baseline, skipped, skipped_cases(envs, cases))


def _same_label(spec: str, label: str) -> VirtbenchError:
    return VirtbenchError(f"environment {spec} has the same label as another ({label}); "
                          "give one of them a name of its own (name=LABEL)")


def check_tools(envs: dict[str, Environment], cases: dict) -> None:
    """A benchmark whose program an environment lacks (where it can tell: the host's own) is
    refused before anything runs, in one line naming the package that brings it."""
    for label, env in envs.items():
        for case, (bench, _) in cases.items():
            lacking = env.missing_tools(bench.tools)
            if lacking:
                raise VirtbenchError(
                    f"{label} cannot run {case}: {', '.join(lacking)} not found; "
                    f"{hosttools.install_hint(lacking)}")


def check_modes(study: Study, envs: dict[str, Environment], baseline: str | None) -> None:
    """Adaptive trials and duet mode compare environments with their reference: refused
    without one (and duet with other than two environments) before anything runs."""
    if study.adaptive and baseline is None:
        raise VirtbenchError("trials = \"auto\" decides each environment against its "
                             "reference: name a baseline (--baseline LABEL) or add native")
    if study.duet:
        if baseline is None or len(envs) != 2:
            raise VirtbenchError(
                f"duet mode measures one environment beside its reference at the same time: "
                f"give exactly two environments, one of them the baseline, not {len(envs)} "
                "(e.g. --env native --env native:name=twin --duet)")
        if len(pinning.host_cpus()) < 2:
            raise VirtbenchError("duet mode needs two CPUs, one for each side; this host "
                                 "offers one")


def skipped_cases(envs: dict[str, Environment], cases: dict) -> list[tuple[str, str, str]]:
    """(environment, case, why) for every case an environment cannot run, decided from what
    it says it can offer and what the benchmark needs: before anything starts."""
    out = []
    for label, env in envs.items():
        caps = env.capabilities()
        for case, (bench, params) in cases.items():
            why = cannot_run(caps, bench.requirements(params))
            if why is not None:
                out.append((label, case, why))
    return out


def skip_line(env: str, case: str, why: str) -> str:
    return f"{case} on {env}: {why}"


def estimate_s(prepared: Prepared) -> float:
    """A rough figure for --dry-run: per-trial timeouts are far too pessimistic, so use
    the benchmark's own notion of its size where it has one."""
    total = 0.0
    per_case = prepared.study.trials + warmup.count(prepared.study)   # warm-ups run too
    skip = prepared.skip
    for case, (bench, params) in prepared.cases.items():
        per = float(params.get("target_seconds", 0) or 0) + 2.0
        total += per * per_case * sum((env, case) not in skip for env in prepared.envs)
    return total


def _raise_interrupt(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


class Runner:
    def __init__(self, store: Store, console: Console | None = None, show_progress: bool = True,
                 host: str | None = None, fleet: str | None = None, series: str | None = None):
        """host names the machine in the run (default: its hostname; a fleet worker passes
        its --name); fleet is the fleet run this run belongs to; series the named series a
        new run is tagged into (`run --series`)."""
        self.store = store
        self.series = series
        self.host = host or socket.gethostname()
        self.fleet = fleet
        self.console = console or Console(stderr=True)
        self.show_progress = show_progress
        self.active: ActiveRun | None = None      # the run being executed, once it starts

    # -- entry points --------------------------------------------------------------------
    def start(self, prepared: Prepared) -> RunTally:
        seed = prepared.study.seed
        prepared = prepared.for_run(seed if seed is not None
                                    else random.SystemRandom().randrange(2**31))
        study = prepared.study
        run_id = self.store.create_run(study.to_dict(), seed=study.seed, quick=study.quick,
                                       version=__version__, host=self.host, fleet=self.fleet,
                                       series=self.series)
        self.store.update_run_detail(run_id, kernels_build=kernels.identity())
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
        self.tracker = Tracker()
        self.session_start = time.monotonic()     # adaptive trials' budget counts from here
        try:
            return self._execute_plan(run_id, prepared)
        except StoreUnavailable as exc:
            raise exc.resumable(run_id, self.tracker.doing, self.tracker.recorded) from None

    def _execute_plan(self, run_id: str, prepared: Prepared) -> RunTally:
        """Plan the run (warm-ups included), say what it will do and run what is missing."""
        study = prepared.study
        slots = warmup.with_warmups(
            plan(list(prepared.envs), list(prepared.cases), study.trials, study.seed,
                 skip=prepared.skip),
            warmup.count(study))
        done = self.store.done_slots(run_id)
        self.tracker.recorded = len(done)
        todo = [s for s in slots if (s.environment, s.benchmark, s.trial) not in done]
        outcome = RunTally(run_id=run_id, status="running", skipped_before=len(slots) - len(todo))
        self._say_skipped(prepared)
        self.store.set_run_status(run_id, "running", finished=False)
        # who runs it (host, boot, pid, start time): `virtbench runs` tells a killed run by it
        self.store.update_run_detail(run_id, **{runproc.DETAIL_KEY: runproc.this_process()})
        self._announce(prepared, outcome)
        keeper = Keeper(prepared.envs, self.store, run_id, self.console, pin=study.pin)
        detail = self.store.get_run(run_id).get("detail") or {}
        self.executor = SlotExecutor(self.store, run_id, prepared, keeper, self.console,
                                     self.tracker, stored_calibrations(detail))
        self.active = ActiveRun(run_id, prepared, keeper, outcome)
        return self._run_active(self.active, len(slots), todo)

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

    def _run_active(self, active: ActiveRun, total: int, todo: list[PlannedTrial]) -> RunTally:
        """Run the slots still to do (then adaptive blocks and exit profiles) of the run
        whose plan has `total` slots; an interrupt ends it resumable."""
        run_id, study, outcome = active.run_id, active.prepared.study, active.outcome
        old_term = signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            with self._progress() as progress:
                self._bar = (progress, progress.add_task(
                    "trials", total=total, completed=outcome.skipped_before))
                self.run_slots(todo)
                if study.adaptive:
                    from .adaptive import AdaptiveLoop
                    AdaptiveLoop(self, active, session_start=self.session_start).run()
            if study.profile == "exits":
                self.tracker.doing = "the exit profiles"
                from .profiled import profile_exits
                outcome.failed_profiles = profile_exits(self.store, run_id, active.prepared,
                                                        active.keeper, self.console)
        except KeyboardInterrupt:
            outcome.status = "interrupted"
            self.store.set_run_status(run_id, "interrupted")
            self.console.print(f"[yellow]interrupted[/]: {outcome.done} trial(s) of this session "
                               f"stored; finish with `virtbench run --resume {run_id}`")
            return outcome
        finally:
            active.keeper.stop_all()
            signal.signal(signal.SIGTERM, old_term)
        outcome.status = "complete"
        self.tracker.doing = "the end of the run"
        self.store.set_run_status(run_id, "complete")
        return outcome

    def run_slots(self, slots: list[PlannedTrial], extra: bool = False) -> None:
        """Run `slots` in order (duet mode: each block's pairs at once); `extra`: slots the
        plan did not count (adaptive blocks), added to the progress bar's total."""
        progress, task = self._bar
        if extra:
            progress.update(task, total=progress.tasks[task].total + len(slots))
        if self.active.prepared.study.duet:
            from .duet import run_duet
            run_duet(self, self.active, slots)
            return
        for slot in slots:
            progress.update(task, description=escape(
                f"{slot.environment} · {slot.benchmark} {trial_name(slot.trial)}"))
            self.slot_ran(slot, self.executor.run(slot))

    def slot_ran(self, slot: PlannedTrial, ok: bool) -> None:
        """Count a slot that ran (whatever its mode) and move the progress bar on."""
        outcome = self.active.outcome
        outcome.done += 1
        if not ok and slot.trial >= 0:
            outcome.failed += 1
        progress, task = self._bar
        progress.advance(task)

    def describe(self, text: str) -> None:
        """The progress line's description (what runs, what is still undecided)."""
        progress, task = self._bar
        progress.update(task, description=escape(text))

    def _progress(self):
        return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("elapsed"), TimeElapsedColumn(), TextColumn("eta"),
                        TimeRemainingColumn(), console=self.console,
                        disable=not self.show_progress, transient=False)


def stored_calibrations(detail: dict) -> dict[str, Calibration]:
    """The run's calibrations as stored in its detail (a resumed run repeats them)."""
    out = {}
    for case, d in (detail.get("calibration") or {}).items():
        try:
            out[case] = Calibration(**d)
        except TypeError:
            continue               # a record this version does not read: calibrate again
    return out


__all__ = ["ActiveRun", "RunTally", "Prepared", "Runner", "lost_outcome", "prepare", "skip_line",
           "estimate_s", "stored_calibrations"]
