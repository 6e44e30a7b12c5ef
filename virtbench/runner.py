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
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)

from . import __version__, benchmarks, environments, kernels, targets, warmup, workroot
from .capabilities import cannot_run
from .environments import Environment
from .errors import AgentError, VirtbenchError
from .lifecycle import Lifecycle
from .store import Sample, Store, StoreUnavailable, jsonable, now
from .study import (PlannedTrial, Study, default_baseline, plan, skipped_environments,
                    validate)


@dataclass
class Prepared:
    study: Study
    envs: dict[str, Environment]                 # label -> environment, in study order
    cases: dict[str, tuple[benchmarks.Benchmark, dict[str, Any]]]   # label -> (bench, params)
    baseline: str | None
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


@dataclass
class Outcome:
    run_id: str
    status: str
    done: int = 0
    failed: int = 0
    skipped_before: int = 0
    failed_profiles: int = 0     # --profile exits: profiles that could not be taken


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
    label_of: dict[str, str] = {}          # a study environment's spec -> its label
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
        if not dry_run:
            usability = type(env).probe()
            if not usability.usable:
                raise VirtbenchError(f"environment {entry.spec}: not usable here: "
                                     f"{usability.reason}")
            env.resolve()
        if env.label in envs:
            raise VirtbenchError(f"environment {entry.spec} has the same label as another "
                                 f"({env.label}); change one of its options")
        envs[env.label] = env
        label_of[entry.spec] = env.label
    if study.baseline in label_of:
        # a baseline named by its spec: its label depends on what resolve() settled
        # (qemu-tcg/... or qemu-kvm/...), which a study file cannot know
        study.baseline = label_of[study.baseline]
    cases = {}
    for case in study.benchmarks:
        bench = benchmarks.get(case.name)
        cases[case.label] = (bench, bench.params(case.params, quick=study.quick))
    baseline = default_baseline(study.baseline, envs)
    if baseline is not None and baseline not in envs:
        raise VirtbenchError(f"baseline {baseline!r} is not an environment of this study; "
                             f"use one of its labels ({', '.join(envs)}) or specs")
    needs_kernels = any(set(b.tools) & set(kernels.KERNELS) for b, _ in cases.values())
    if needs_kernels and not dry_run:
        kernels.build()   # a missing compiler is bad input: fail before the run exists
    if not envs:
        raise VirtbenchError("no environment of this study can run here: " + "; ".join(
            f"{spec}: {why}" for spec, why in skipped))
    return Prepared(study, envs, cases, baseline, skipped, skipped_cases(envs, cases))


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
                 host: str | None = None, fleet: str | None = None):
        """host names the machine in the run (default: its hostname; a fleet worker passes
        its --name); fleet is the fleet run this run belongs to."""
        self.store = store
        self.host = host or socket.gethostname()
        self.fleet = fleet
        self.console = console or Console(stderr=True)
        self.show_progress = show_progress

    # -- entry points --------------------------------------------------------------------
    def start(self, prepared: Prepared) -> Outcome:
        study = prepared.study
        if study.seed is None:
            study.seed = random.SystemRandom().randrange(2**31)
        run_id = self.store.create_run(study.to_dict(), seed=study.seed, quick=study.quick,
                                       version=__version__, host=self.host, fleet=self.fleet)
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

    def resume(self, run_id: str, retry_failed: bool = False) -> Outcome:
        """Run the slots the run is missing; with retry_failed also those whose trial failed
        (the failed rows are kept as superseded_trials)."""
        run = self.store.get_run(run_id)
        study = Study.from_dict(run["study"])
        prepared = prepare(study)
        if retry_failed:
            n = self.store.supersede_failed(run_id)
            self.console.print(f"retrying {n} failed trial(s) of run {run_id}")
        return self._execute(run_id, prepared)

    # -- the loop ------------------------------------------------------------------------
    def _execute(self, run_id: str, prepared: Prepared) -> Outcome:
        """The plan's missing slots; a store that goes away ends the run in one line (exit 3)
        saying how to resume it: every trial committed before stays, exactly once."""
        self._doing, self._recorded = "the start of the run", 0
        try:
            return self._execute_plan(run_id, prepared)
        except StoreUnavailable as exc:
            raise exc.resumable(run_id, self._doing, self._recorded) from None

    def _execute_plan(self, run_id: str, prepared: Prepared) -> Outcome:
        study = prepared.study
        slots = warmup.with_warmups(
            plan(list(prepared.envs), list(prepared.cases), study.trials, study.seed,
                 skip=prepared.skip),
            warmup.count(study))
        done = self.store.done_slots(run_id)
        self._recorded = len(done)
        todo = [s for s in slots if (s.environment, s.benchmark, s.trial) not in done]
        outcome = Outcome(run_id=run_id, status="running", skipped_before=len(slots) - len(todo))
        for spec, why in prepared.skipped:
            self.console.print(f"[yellow]skipping[/] environment {escape(spec)}: {escape(why)}",
                               highlight=False)
        for env, case, why in prepared.skipped_cases:
            self.console.print(f"[yellow]skipping[/] {escape(skip_line(env, case, why))}",
                               highlight=False)
        self.store.set_run_status(run_id, "running", finished=False)
        self.console.print(f"[bold]run {run_id}[/]: {len(prepared.envs)} environment(s) x "
                           f"{len(prepared.cases)} benchmark(s) x {study.trials} trial(s)"
                           + (f", {len(prepared.skipped_cases)} case(s) skipped"
                              if prepared.skipped_cases else "")
                           + (f", {outcome.skipped_before} already done" if outcome.skipped_before else "")
                           + (" [yellow](quick sizes)[/]" if study.quick else ""))
        state = Lifecycle(prepared.envs, self.store, run_id, self.console,
                          pin=getattr(study, "pin", "auto") or "auto")
        old_term = signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            with self._progress() as progress:
                task = progress.add_task("trials", total=len(slots), completed=outcome.skipped_before)
                for slot in todo:
                    progress.update(task, description=escape(
                        f"{slot.environment} · {slot.benchmark} {_trial_name(slot.trial)}"))
                    ok = self._run_slot(run_id, prepared, state, slot)
                    outcome.done += 1
                    if not ok and slot.trial >= 0:
                        outcome.failed += 1
                    progress.advance(task)
            if getattr(study, "profile", None) == "exits":
                self._doing = "the exit profiles"
                from .exitprofiles import profile_exits
                outcome.failed_profiles = profile_exits(self.store, run_id, prepared, state,
                                                        self.console)
        except KeyboardInterrupt:
            outcome.status = "interrupted"
            self.store.set_run_status(run_id, "interrupted")
            self.console.print(f"[yellow]interrupted[/]: {outcome.done} trial(s) of this session "
                               f"stored; finish with `virtbench run --resume {run_id}`")
            return outcome
        finally:
            state.stop_all()
            signal.signal(signal.SIGTERM, old_term)
        outcome.status = "complete"
        self._doing = "the end of the run"
        self.store.set_run_status(run_id, "complete")
        return outcome

    def _progress(self):
        return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("elapsed"), TimeElapsedColumn(), TextColumn("eta"),
                        TimeRemainingColumn(), console=self.console,
                        disable=not self.show_progress, transient=False)

    def _run_slot(self, run_id: str, prepared: Prepared, state: Lifecycle,
                  slot: PlannedTrial) -> bool:
        bench, params = prepared.cases[slot.benchmark]
        record = dict(environment=slot.environment, benchmark=slot.benchmark,
                      benchmark_name=bench.name, params=params, trial=slot.trial, seq=slot.seq,
                      warmup=slot.trial < 0)
        env = state.envs[slot.environment]
        self._doing = f"trial {slot.environment} · {slot.benchmark} {_trial_name(slot.trial)}"
        started = now()
        error = state.ready(env, bench, params)
        if error is not None:
            self.store.record_trial(run_id, status="failed", samples_=[], error=error,
                                    started=started, boot=state.boot.get(env.label), **record)
            self._recorded += 1
            return False
        boot = state.boot.get(env.label)
        try:
            result = env.run_trial(bench, params)
        except AgentError as exc:
            result = lost_outcome(bench, exc)
        result.error = state.after(env, result.error)
        metrics = env.metrics_for(bench)
        if result.ok and not any(m.name in result.values for m in metrics):
            result.error = "the parser returned none of the benchmark's metrics"
        # a successful trial's values are its results; a failed one's, what it measured
        # before it failed: kept as its samples, evidence that never enters the statistics
        measured = result.measured()
        samples_ = [Sample(m.name, measured[m.name], m.unit, m.higher_is_better,
                           m.scope, m.base or m.name, m.instance)
                    for m in metrics if m.name in measured]
        self.store.record_trial(run_id, status="ok" if result.ok else "failed", samples_=samples_,
                                error=result.error, exit=result.exit, stdout=result.stdout,
                                stderr=result.stderr, wall_s=result.wall_s, started=started,
                                boot=boot, detail=result.detail, **record)
        self._recorded += 1
        for kind, message in result.warnings:
            state.warn_once(kind, message, slot.environment, slot.benchmark)
        if not result.ok:
            self.console.print("[red]failed[/] " + escape(
                f"{slot.environment} · {slot.benchmark} {_trial_name(slot.trial)}: "
                f"{result.error}"))
        return result.ok


def lost_outcome(bench, exc: AgentError) -> benchmarks.TrialOutcome:
    """A trial whose agent was lost mid-command: failed, with whatever output arrived before
    (an agent that streams its output sends it as it comes) and what that output measured."""
    stdout, stderr = getattr(exc, "stdout", "") or "", getattr(exc, "stderr", "") or ""
    return benchmarks.TrialOutcome(error=f"agent lost: {exc}", stdout=stdout, stderr=stderr,
                                   partial=bench.evidence(stdout))


def _trial_name(trial: int) -> str:
    return f"warm-up {-trial}" if trial < 0 else f"#{trial + 1}"
