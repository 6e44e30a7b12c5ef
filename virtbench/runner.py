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
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)

from . import __version__, benchmarks, environments, kernels
from .environments import Environment
from .errors import AgentError, VirtbenchError
from .store import Sample, Store, now
from .study import (PlannedTrial, Study, default_baseline, plan, skipped_environments,
                    validate)

MAX_RESTARTS = 2   # an environment whose agent dies is restarted at most this often


@dataclass
class Prepared:
    study: Study
    envs: dict[str, Environment]                 # label -> environment, in study order
    cases: dict[str, tuple[benchmarks.Benchmark, dict[str, Any]]]   # label -> (bench, params)
    baseline: str | None
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (spec, why) not run here


@dataclass
class Outcome:
    run_id: str
    status: str
    done: int = 0
    failed: int = 0
    skipped_before: int = 0


def prepare(study: Study, dry_run: bool = False) -> Prepared:
    """Validate the study and create (not start) its environments. Raises VirtbenchError.

    dry_run: the plan only; nothing is probed, resolved (no KVM probe boot) or built (no
    kernel, no image), so an accelerator chosen at run time shows as the spec gives it."""
    validate(study)
    skipped = skipped_environments(study)
    envs: dict[str, Environment] = {}
    for entry in study.environments:
        if entry.requires:
            continue
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
    cases = {}
    for case in study.benchmarks:
        bench = benchmarks.get(case.name)
        cases[case.label] = (bench, bench.params(case.params, quick=study.quick))
    baseline = default_baseline(study.baseline, envs)
    if baseline is not None and baseline not in envs:
        raise VirtbenchError(f"baseline {baseline!r} is not an environment of this study; "
                             f"use one of: {', '.join(envs)}")
    needs_kernels = any(set(b.tools) & set(kernels.KERNELS) for b, _ in cases.values())
    if needs_kernels and not dry_run:
        kernels.build()   # a missing compiler is bad input: fail before the run exists
    if not envs:
        raise VirtbenchError("no environment of this study can run here: " + "; ".join(
            f"{spec}: {why}" for spec, why in skipped))
    return Prepared(study, envs, cases, baseline, skipped)


def estimate_s(prepared: Prepared) -> float:
    """A rough figure for --dry-run: per-trial timeouts are far too pessimistic, so use
    the benchmark's own notion of its size where it has one."""
    total = 0.0
    for _, (bench, params) in prepared.cases.items():
        per = float(params.get("target_seconds", 0) or 0) + 2.0
        total += per * prepared.study.trials * len(prepared.envs)
    return total


def _raise_interrupt(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


class Runner:
    def __init__(self, store: Store, console: Console | None = None, show_progress: bool = True):
        self.store = store
        self.console = console or Console(stderr=True)
        self.show_progress = show_progress

    # -- entry points --------------------------------------------------------------------
    def start(self, prepared: Prepared) -> Outcome:
        study = prepared.study
        if study.seed is None:
            study.seed = random.SystemRandom().randrange(2**31)
        run_id = self.store.create_run(study.to_dict(), seed=study.seed, quick=study.quick,
                                       version=__version__, host=socket.gethostname())
        for label, env in prepared.envs.items():
            self.store.upsert_environment(run_id, label, kind=env.kind, spec=str(env.spec),
                                          options=_jsonable(env.values), status="planned")
        for spec, why in prepared.skipped:
            self.store.add_warning(run_id, "environment_skipped", f"{spec}: {why}", environment=spec)
        return self._execute(run_id, prepared)

    def resume(self, run_id: str) -> Outcome:
        run = self.store.get_run(run_id)
        study = Study.from_dict(run["study"])
        prepared = prepare(study)
        return self._execute(run_id, prepared)

    # -- the loop ------------------------------------------------------------------------
    def _execute(self, run_id: str, prepared: Prepared) -> Outcome:
        study = prepared.study
        slots = plan(list(prepared.envs), list(prepared.cases), study.trials, study.seed)
        done = self.store.done_slots(run_id)
        todo = [s for s in slots if (s.environment, s.benchmark, s.trial) not in done]
        outcome = Outcome(run_id=run_id, status="running", skipped_before=len(slots) - len(todo))
        for spec, why in prepared.skipped:
            self.console.print(f"[yellow]skipping[/] environment {spec}: {why}", highlight=False)
        self.store.set_run_status(run_id, "running", finished=False)
        self.console.print(f"[bold]run {run_id}[/]: {len(prepared.envs)} environment(s) x "
                           f"{len(prepared.cases)} benchmark(s) x {study.trials} trial(s)"
                           + (f", {outcome.skipped_before} already done" if outcome.skipped_before else "")
                           + (" [yellow](quick sizes)[/]" if study.quick else ""))
        state = _EnvState(prepared.envs)
        old_term = signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            with self._progress() as progress:
                task = progress.add_task("trials", total=len(slots), completed=outcome.skipped_before)
                for slot in todo:
                    progress.update(task, description=f"{slot.environment} · {slot.benchmark} "
                                                      f"#{slot.trial + 1}")
                    ok = self._run_slot(run_id, prepared, state, slot)
                    outcome.done += 1
                    if not ok:
                        outcome.failed += 1
                    progress.advance(task)
        except KeyboardInterrupt:
            outcome.status = "interrupted"
            self.store.set_run_status(run_id, "interrupted")
            self.console.print(f"[yellow]interrupted[/]: {outcome.done} trial(s) of this session "
                               f"stored; finish with `virtbench run --resume {run_id}`")
            return outcome
        finally:
            state.stop_all(self.console)
            signal.signal(signal.SIGTERM, old_term)
        outcome.status = "complete"
        self.store.set_run_status(run_id, "complete")
        return outcome

    def _progress(self):
        return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("elapsed"), TimeElapsedColumn(), TextColumn("eta"),
                        TimeRemainingColumn(), console=self.console,
                        disable=not self.show_progress, transient=False)

    def _run_slot(self, run_id: str, prepared: Prepared, state: "_EnvState",
                  slot: PlannedTrial) -> bool:
        bench, params = prepared.cases[slot.benchmark]
        record = dict(environment=slot.environment, benchmark=slot.benchmark,
                      benchmark_name=bench.name, params=params, trial=slot.trial, seq=slot.seq)
        env = state.envs[slot.environment]
        started = now()
        error = state.ensure_up(env, self.store, run_id, self.console)
        if error is not None:
            self.store.record_trial(run_id, status="failed", samples_=[], error=error,
                                    started=started, **record)
            return False
        state.focus(env)
        try:
            result = env.run_trial(bench, params)
        except AgentError as exc:
            state.mark_down(env)
            result = benchmarks.TrialOutcome(error=f"agent lost: {exc}")
        metrics = env.metrics_for(bench)
        values = {m.name: result.values[m.name] for m in metrics if m.name in result.values}
        if result.ok and not values:
            result.error = "the parser returned none of the benchmark's metrics"
        samples_ = [Sample(m.name, values[m.name], m.unit, m.higher_is_better)
                    for m in metrics if m.name in values] if result.ok else []
        self.store.record_trial(run_id, status="ok" if result.ok else "failed", samples_=samples_,
                                error=result.error, exit=result.exit, stdout=result.stdout,
                                stderr=result.stderr, wall_s=result.wall_s, started=started,
                                **record)
        for kind, message in result.warnings:
            state.warn_once(self.store, run_id, kind, message, slot.environment, slot.benchmark)
        if not result.ok:
            self.console.print(f"[red]failed[/] {slot.environment} · {slot.benchmark} "
                               f"#{slot.trial + 1}: {result.error}")
        return result.ok


class _EnvState:
    """Which environments are up, which one has the machine, which gave up."""

    def __init__(self, envs: dict[str, Environment]):
        self.envs = envs
        self.up: set[str] = set()
        self.paused: set[str] = set()
        self.dead: dict[str, str] = {}        # label -> why it cannot start
        self.restarts: dict[str, int] = {}
        self.warned: set[tuple[str, str, str, str]] = set()

    def ensure_up(self, env: Environment, store: Store, run_id: str, console: Console) -> str | None:
        label = env.label
        if label in self.dead:
            return self.dead[label]
        if label in self.up:
            return None
        t0 = time.monotonic()
        try:
            console.print(f"starting {label} ...")
            env.start()
            meta = env.metadata()
        except (VirtbenchError, AgentError, OSError) as exc:
            env.stop()
            why = f"environment {label} failed to start: {exc}"
            self.dead[label] = why
            store.upsert_environment(run_id, label, status="failed", error=str(exc))
            store.add_warning(run_id, "environment_failed", why, environment=label)
            console.print(f"[red]{why}[/]")
            return why
        boot = env.boot_s if env.boot_s is not None else time.monotonic() - t0
        self.up.add(label)
        store.upsert_environment(run_id, label, status="up", metadata=_jsonable(meta), boot_s=boot)
        for note in env.notes:
            store.add_warning(run_id, "environment_note", note, environment=label)
        return None

    def warn_once(self, store: Store, run_id: str, kind: str, message: str, environment: str,
                  benchmark: str) -> None:
        """A trial's warning, stored the first time it is seen in this session of the run."""
        key = (kind, message, environment, benchmark)
        if key not in self.warned:
            self.warned.add(key)
            store.add_warning(run_id, kind, message, environment=environment, benchmark=benchmark)

    def focus(self, env: Environment) -> None:
        """Give the machine to `env`: pause every other running environment."""
        for label in self.up:
            other = self.envs[label]
            if other is env and label in self.paused:
                other.resume()
                self.paused.discard(label)
            elif other is not env and label not in self.paused:
                other.pause()
                self.paused.add(label)

    def mark_down(self, env: Environment) -> None:
        label = env.label
        env.stop()
        self.up.discard(label)
        self.paused.discard(label)
        self.restarts[label] = self.restarts.get(label, 0) + 1
        if self.restarts[label] > MAX_RESTARTS:
            self.dead[label] = f"environment {label}: agent lost {self.restarts[label]} times; gave up"

    def stop_all(self, console: Console) -> None:
        for label, env in self.envs.items():
            try:
                env.stop()
            except Exception as exc:  # cleanup must reach every environment
                console.print(f"[red]stopping {label} failed: {exc}[/]")
        self.up.clear()


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)
