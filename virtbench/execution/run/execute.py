"""One planned slot, from start to store: the environment made ready, the benchmark case
calibrated (virtbench.execution.run.sections), the trial measured (its repetitions, what else the host did
meanwhile: virtbench.machinery.machine.load, virtbench.execution.run.disturbance) and stored with its samples.

The run's session (virtbench.execution.run.session) calls `run(slot)` for each slot in turn;
duet mode (virtbench.execution.run.duet) calls `ready()`, then `measure()` of two slots on two
threads at once, then `record()` of each.
"""
from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape

from ...measure import benchmarks
from .disturbance import Limits, cpu_share, figures, judge, usual_share
from ...measure.environments import Environment
from ...core.errors import AgentError, VirtbenchError
from ...machinery.machine.load import LoadSampler
from .keeper import Keeper
from .sections import (
    CALIBRATION_RUNS,
    Calibration,
    calibrated,
    calibration_of,
    run_repeated,
    short_warning,
)
from ...measure.benchmarks.repetition import section_s
from ...foundations.store import Sample, Store, TrialRecord, now
from ...study.design import PlannedTrial


@dataclass
class Tracker:
    """What the run was doing and how many trials it recorded (for a store that goes away)."""
    doing: str = "the start of the run"
    recorded: int = 0


@dataclass
class Ready:
    """A slot whose environment is ready: what measure() and record() need."""
    slot: PlannedTrial
    env: Environment
    bench: benchmarks.Benchmark
    params: dict
    started: object
    error: str | None = None


class SlotExecutor:
    def __init__(self, store: Store, run_id: str, prepared, keeper: Keeper, console: Console,
                 tracker: Tracker, calibrations: dict[str, Calibration] | None = None):
        self.store, self.run_id, self.prepared = store, run_id, prepared
        self.keeper, self.console, self.tracker = keeper, console, tracker
        study = prepared.study
        self.min_section_s = float(study.min_section_s)
        self.limits = Limits.of(study)
        self.calibrations: dict[str, Calibration] = dict(calibrations or {})
        self._history: dict[tuple[str, str], list[float]] | None = None
        self._shares()            # now, not from the two threads of a duet

    # -- the whole slot ------------------------------------------------------------------
    def run(self, slot: PlannedTrial) -> bool:
        ready = self.ready(slot)
        if ready.error is not None:
            return self.record(ready, None)
        return self.record(ready, self.measure(ready))

    def ready(self, slot: PlannedTrial, others: tuple[Environment, ...] = ()) -> Ready:
        """Calibrate the case if it is not yet, then make the slot's environment ready (and
        `others` with it: duet mode keeps its partner running)."""
        bench, params = self.prepared.cases[slot.benchmark]
        env = self.keeper.envs[slot.environment]
        self.tracker.doing = f"trial {slot.environment} · {slot.benchmark} {trial_name(slot.trial)}"
        started = now()
        error = self.calibrate(slot.benchmark, env)
        if error is None:
            error = self.keeper.ready(env, bench, params, keep=others)
        return Ready(slot, env, bench, params, started, error)

    # -- calibration ---------------------------------------------------------------------
    def repetitions(self, case: str, env: Environment) -> int:
        """The case's calibrated loop count; 1 for a group of instances, whose aggregate,
        spread and fairness relate its instances at one moment (a mean of them over
        repetitions would not be any of them): a short section there is only said."""
        cal = self.calibrations.get(case)
        return cal.repetitions if cal is not None and env.instance_count == 1 else 1

    def minimum(self, case: str, env: Environment) -> float:
        """The section a trial of `case` in `env` repeats to (beyond its calibrated loop
        count when its sections turn out shorter than calibrated); 0 (none) for a case not
        calibrated and for a group of instances, which runs once."""
        cal = self.calibrations.get(case)
        return self.min_section_s if cal is not None and env.instance_count == 1 else 0.0

    def calibrate(self, case: str, env: Environment) -> str | None:
        """One calibration run of `case` (in the reference environment when it can run it,
        else in `env`), once per run; None, or why the slot's trial fails."""
        bench, params = self.prepared.cases[case]
        if case in self.calibrations or not calibrated(bench) or self.min_section_s <= 0:
            return None
        where = self._calibration_env(case, env)
        error = self.keeper.ready(where, bench, params)
        sections = []
        for _ in range(CALIBRATION_RUNS):
            if error is not None:
                break
            try:
                outcome = where.run_trial(bench, params)
            except AgentError as exc:
                outcome = lost_outcome(bench, exc)
            error = self.keeper.after(where, outcome.error)
            sections.append(section_s(bench, outcome.stdout) if error is None else None)
        if error is not None:
            return f"the calibration run of {case} on {where.label} failed: {error}"
        known = [x for x in sections if x is not None]
        cal = calibration_of(min(known) if known else None, where.label, self.min_section_s)
        self.calibrations[case] = cal
        self.store.update_run_detail(self.run_id, calibration={
            c: k.to_dict() for c, k in self.calibrations.items()})
        if cal.repetitions > 1:
            self.console.print(f"{escape(case)}: measured section {cal.section_s:.3g} s on "
                               f"{escape(where.label)}, below {self.min_section_s:g} s: "
                               f"{cal.repetitions} repetitions per trial", highlight=False)
        return None

    def _calibration_env(self, case: str, env: Environment) -> Environment:
        ref = self.prepared.baseline
        if ref is None or ref in self.keeper.dead or (ref, case) in self.prepared.skip:
            return env
        return self.keeper.envs.get(ref, env)

    # -- measuring -----------------------------------------------------------------------
    def measure(self, ready: Ready) -> benchmarks.TrialOutcome:
        """The trial: its repetitions, with the host's load sampled over them. Runs on any
        thread (duet mode measures two at once); stores nothing."""
        env, bench, params = ready.env, ready.bench, ready.params
        try:
            threads = env.vcpu_threads()
        except (AgentError, OSError, VirtbenchError):
            threads = []
        with LoadSampler(threads) as sampler:
            outcome = run_repeated(lambda: env.run_trial(bench, params), bench,
                                   env.metrics_for(bench), self.repetitions(ready.slot.benchmark, env),
                                   lambda exc: lost_outcome(bench, exc),
                                   self.minimum(ready.slot.benchmark, env))
        busy = max(1, int(params.get("processes", 1) or 1)) * env.instance_count
        share = cpu_share(sampler.load, outcome.cpu_s, outcome.wall_s, busy)
        outcome.detail["load"] = figures(sampler.load, share)
        key = (ready.slot.environment, ready.slot.benchmark)
        history = self._shares().setdefault(key, [])
        if outcome.ok and ready.slot.trial >= 0:
            usual = usual_share(history, self.limits)
            disturbed = judge(sampler.load, share, usual, bench.cpu_bound, self.limits)
            if disturbed is not None:
                outcome.detail["disturbed"] = disturbed
        if outcome.ok and share is not None:
            history.append(share)
        return outcome

    def _shares(self) -> dict[tuple[str, str], list[float]]:
        """CPU shares of the run's successful trials so far, per (environment, case): read
        from the store when the session starts (a resumed run goes on from them)."""
        if self._history is None:
            history: dict[tuple[str, str], list[float]] = {}
            for t in self.store.trials(self.run_id, include_warmup=True):
                share = ((t.get("detail") or {}).get("load") or {}).get("cpu_share")
                if t["status"] == "ok" and share is not None:
                    history.setdefault((t["environment"], t["benchmark"]), []).append(share)
            self._history = history
        return self._history

    # -- storing -------------------------------------------------------------------------
    def record(self, ready: Ready, result: benchmarks.TrialOutcome | None) -> bool:
        """Store the trial (or its failure to start) with its samples; True when it is ok."""
        slot, env, bench = ready.slot, ready.env, ready.bench
        record = dict(environment=slot.environment, benchmark=slot.benchmark,
                      benchmark_name=bench.name, params=ready.params, trial=slot.trial,
                      seq=slot.seq, warmup=slot.trial < 0)
        boot = self.keeper.boot.get(env.label)
        if result is None:
            self.store.record_trial(self.run_id, TrialRecord(
                status="failed", error=ready.error, started=ready.started, boot=boot, **record))
            self.tracker.recorded += 1
            return False
        result.error = self.keeper.after(env, result.error)
        metrics = env.metrics_for(bench)
        if result.ok and not any(m.name in result.values for m in metrics):
            result.error = "the parser returned none of the benchmark's metrics"
        # a successful trial's values are its results; a failed one's, what it measured
        # before it failed: kept as its samples, evidence that never enters the statistics
        measured = result.measured()
        samples_ = [Sample(m.name, measured[m.name], m.unit, m.higher_is_better,
                           m.scope, m.base or m.name, m.instance)
                    for m in metrics if m.name in measured]
        self.store.record_trial(self.run_id, TrialRecord(
            status="ok" if result.ok else "failed", samples=samples_, error=result.error,
            exit=result.exit, stdout=result.stdout, stderr=result.stderr, wall_s=result.wall_s,
            started=ready.started, boot=boot, detail=result.detail, **record))
        self.tracker.recorded += 1
        for kind, message in result.warnings:
            self.keeper.warn_once(kind, message, slot.environment, slot.benchmark)
        short = short_warning(slot.benchmark, slot.environment, result, self.min_section_s,
                              repeatable=env.instance_count == 1)
        if short is not None:
            self.keeper.warn_once("short_section", short, slot.environment, slot.benchmark,
                                 key=("short_section", slot.environment, slot.benchmark))
        where = f"{slot.environment} · {slot.benchmark} {trial_name(slot.trial)}"
        if not result.ok:
            self.console.print("[red]failed[/] " + escape(f"{where}: {result.error}"))
        elif "disturbed" in result.detail:
            self.console.print("[yellow]disturbed[/] " + escape(
                f"{where}: {result.detail['disturbed']['reason']}; kept, left out of the "
                "statistics"))
        return result.ok


def lost_outcome(bench, exc: AgentError) -> benchmarks.TrialOutcome:
    """A trial whose agent was lost mid-command: failed, with whatever output arrived before
    (an agent that streams its output sends it as it comes) and what that output measured."""
    stdout, stderr = getattr(exc, "stdout", "") or "", getattr(exc, "stderr", "") or ""
    return benchmarks.TrialOutcome(error=f"agent lost: {exc}", stdout=stdout, stderr=stderr,
                                   partial=bench.evidence(stdout))


def trial_name(trial: int) -> str:
    return f"warm-up {-trial}" if trial < 0 else f"#{trial + 1}"
