"""The density sweep: add guests step by step until this host stops scaling
(docs/lifecycle.md).

Each step is a run of its own (in the store, `virtbench report RUN` shows it): the
environment with `instances = N`, every benchmark's trials in all N guests at once
(docs/instances-and-limits.md), and by default native processes at the same count as the
reference curve. After each step every benchmark's curve is judged (vmlife/density.py:
the slowest guest under the floor, or the aggregate no longer rising); the sweep ends when
every judged curve has stopped, at its maximum count, when its time is spent, when the next
step's guests would not fit the host's available memory, or when a step's trials all fail.
Each step's guests are started and stopped by the runner like any run's: none outlives it.

The sweep itself is stored as a run of its own (SweepRecord: no trials; its study the
request under `density`, its detail's `density` the DensityReport so far), written when it
starts, after each step and when it ends; each step's run names it (detail
`density_sweep`). An interrupted sweep keeps the steps that finished; `virtbench report
SWEEP` reads it back (results/analysis/stored.py).
"""
from __future__ import annotations

import dataclasses
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ... import __version__
from ...measure import environments
from ...machinery.machine import meminfo
from ...results.analysis import analyze_run
from ...measure.benchmarks import get as get_bench
from ...core import defaults
from ...core.errors import VirtbenchError
from ...foundations.model import RunReport
from ...foundations.model.density import DensityCurve, DensityReport, DensityRule, DensityStep, Throughput
from .runner import Runner, prepare
from ...foundations.store import Store, now
from ...machinery.host import runproc
from ...foundations.store.sweeps import STEP_KEY, SWEEP_KEY
from ...study.flags import StudyFlags, parse_bench_spec, with_flags
from ...machinery.vmlife import density as dens

REFERENCE_KIND = "native"
SCHEDULES = ("linear", "doubling")


def headline(bench_name: str) -> str:
    """The metric a benchmark's curve is judged on unless --metric says: its first timed
    metric (the one its kernel stamps: stream's copy rate, cyclepi's seconds), else its
    first."""
    bench = get_bench(bench_name)
    if bench.timed:
        return bench.timed[0]
    return bench.metrics[0].name


def with_instances(spec: str, count: int) -> str:
    """`kind:opts` with instances=count (a count of 1: the spec as it is)."""
    if count == 1:
        return spec
    return f"{spec}{',' if ':' in spec else ':'}instances={count}"


def step_of(report: RunReport, env_label: str, case: str, metric: str, count: int,
            seed: int = 0) -> DensityStep | None:
    """A step's throughputs from its run's report (pure): the group's aggregate row and each
    instance's row of `metric` (a single guest: its one row); None when it has no sample."""
    rows = [r for r in report.results if r.environment == env_label and r.benchmark == case
            and r.metric_id.base == metric and r.n > 0]
    if count == 1:
        single = [r for r in rows if r.metric_id.scope == "single"]
        if not single:
            return None
        r = single[0]
        f = dens.figure(dens.throughputs(r.samples, r.higher_is_better), seed)
        return DensityStep(count=1, run_id=report.run.id,
                           aggregate=Throughput(**vars(f)), per_guest=[Throughput(**vars(f))])
    agg = [r for r in rows if r.metric_id.scope == "aggregate"]
    inst = sorted((r for r in rows if r.metric_id.scope == "instance"),
                  key=lambda r: r.metric_id.instance or 0)
    if not agg or len(inst) != count:
        return None
    a = agg[0]
    aggregate = dens.figure(dens.throughputs(a.samples, a.higher_is_better, jobs=count), seed)
    guests = [dens.figure(dens.throughputs(r.samples, r.higher_is_better), seed) for r in inst]
    return DensityStep(count=count, run_id=report.run.id, aggregate=Throughput(**vars(aggregate)),
                       per_guest=[Throughput(**vars(g)) for g in guests])


def memory_of(report: RunReport, env_label: str, count: int) -> tuple[float | None, ...]:
    """(PSS, VMM overhead) of all the step's guests together, MiB: the sum of each guest's
    footprint (trimmed means of its rows; one guest: its one row); None where the step has
    none (pure)."""
    out = []
    for metric in ("pss_mib", "overhead_mib"):
        scope = "single" if count == 1 else "instance"
        rows = [r for r in report.results if r.environment == env_label and r.n > 0
                and r.metric_id.base == metric and r.metric_id.scope == scope]
        out.append(sum(r.trimmed_mean for r in rows) if len(rows) == count else None)
    return tuple(out)


def as_step(step: DensityStep) -> dens.Step:
    def fig(t: Throughput) -> dens.Figure:
        return dens.Figure(t.mean, t.ci_low, t.ci_high, t.n)
    return dens.Step(step.count, fig(step.aggregate), [fig(g) for g in step.per_guest],
                     step.run_id)


def judge_curve(curve: DensityCurve, rule: dens.Rule) -> None:
    """Set the curve's knee, stop reason and derived figures from its steps (pure)."""
    steps = [as_step(s) for s in curve.steps]
    single = min(steps, key=lambda s: s.count).slowest if steps else 0.0
    for model, step in zip(curve.steps, steps):
        model.slowest_share = step.slowest / single if single else None
        model.fairness = step.fairness
    verdict = dens.judge(steps, rule)
    curve.knee, curve.stop_reason, curve.why = verdict.knee, verdict.stop_reason, verdict.why


@dataclass(frozen=True)
class DensityRequest:
    """What `virtbench density` is asked (its flags; the defaults are core/defaults.py's):
    copies of `spec` running `benches` at once, up to `max_count` guests, `trials` per step,
    judged by the rule (`floor`, `min_gain`), each benchmark on its headline metric unless
    `metrics` names another; `max_s` bounds the time; `reference`: native processes at the
    same counts. Checked when it is made: a bad value is one line (exit 2)."""

    spec: str
    benches: list[str]
    max_count: int = defaults.DENSITY_MAX_GUESTS
    trials: int = defaults.DENSITY_TRIALS
    quick: bool = False
    schedule: str = "linear"
    floor: float = defaults.DENSITY_FLOOR
    min_gain: float = defaults.DENSITY_MIN_GAIN
    max_s: float = defaults.DENSITY_MAX_S
    reference: bool = True
    metrics: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        self.rule()
        if not self.max_s > 0:
            raise VirtbenchError("density --max-time: a positive number of seconds")
        if "instances=" in self.spec:
            raise VirtbenchError(f"density --env {self.spec}: the sweep sets instances itself; "
                                 "give the spec without it")
        if not 1 <= self.max_count <= 64:
            raise VirtbenchError("density --max: from 1 to 64 guests")
        if not 1 <= self.trials <= 100:
            raise VirtbenchError("density --trials: from 1 to 100")
        if self.schedule not in SCHEDULES:
            raise VirtbenchError("density --schedule: linear or doubling")
        if not self.benches:
            raise VirtbenchError("density: give at least one --bench NAME")
        self.cases()

    def rule(self) -> dens.Rule:
        try:
            return dens.Rule(self.floor, self.min_gain)
        except ValueError as exc:
            raise VirtbenchError(f"density: {exc}") from None

    def cases(self) -> list[tuple[str, str]]:
        """(--bench text, the metric its curve is judged on) of every benchmark."""
        metrics, cases = dict(self.metrics), []
        for text in self.benches:
            name, _ = parse_bench_spec(text)
            metric = metrics.pop(name, None) or headline(name)
            if metric not in {m.name for m in get_bench(name).metrics}:
                raise VirtbenchError(f"density --metric {name}={metric}: {name} has no such "
                                     "metric (see `virtbench benchmarks`)")
            cases.append((text, metric))
        if metrics:
            raise VirtbenchError(f"density --metric {', '.join(metrics)}: not a --bench of "
                                 "this sweep")
        return cases


class SweepRecord:
    """The sweep run of one sweep in `store`; `request` is its DensityRequest."""

    def __init__(self, store: Store, request):
        self.store, self.request, self.run_id = store, request, ""

    def open(self, report: DensityReport) -> str:
        """Make the sweep's run (running) and store `report` in it; its id."""
        r = self.request
        study = {"name": f"density {r.spec}", SWEEP_KEY: dataclasses.asdict(r)}
        self.run_id = self.store.create_run(study, seed=0, quick=r.quick, version=__version__,
                                            host=socket.gethostname())
        self.store.update_run_detail(self.run_id,
                                     **{runproc.DETAIL_KEY: runproc.this_process()})
        report.run_id = self.run_id
        self.save(report)
        return self.run_id

    def save(self, report: DensityReport) -> None:
        self.store.update_run_detail(self.run_id, **{SWEEP_KEY: report.model_dump(mode="json")})

    def step(self, step_run_id: str, report: DensityReport) -> None:
        """A step finished: its run names the sweep, the sweep holds the step."""
        self.store.update_run_detail(step_run_id, **{STEP_KEY: self.run_id})
        self.save(report)

    def close(self, report: DensityReport, status: str) -> None:
        """The sweep ended (complete) or was interrupted: its last report, its status."""
        self.save(report)
        self.store.set_run_status(self.run_id, status)


class Sweep:
    """One density sweep (module docstring) of a DensityRequest. `run_step(study) -> run
    id` is the runner's start (a test passes its own); `available() -> bytes` the host's
    available memory."""

    def __init__(self, request: DensityRequest, store: Store | None = None, console=None,
                 show_progress: bool = True, run_step: Callable | None = None,
                 available: Callable | None = None):
        self.request, self.rule, self.cases = request, request.rule(), request.cases()
        self.reference = request.reference and request.spec.split(":", 1)[0] != REFERENCE_KIND
        self.store, self.console, self.show_progress = store, console, show_progress
        self._run_step = run_step or self._runner_step
        self._available = available or (lambda: meminfo.available(meminfo.host_text() or ""))
        made = environments.create(request.spec)    # bad options fail here, before anything runs
        # each step also takes the guests' host memory (benchmark footprint) where it can
        self.footprint = bool(made.capabilities().footprint) and \
            not any(parse_bench_spec(t)[0] == "footprint" for t in request.benches)

    # -- one step ------------------------------------------------------------------------
    def _study(self, count: int):
        r = self.request
        envs = [with_instances(r.spec, count)]
        if self.reference:
            envs.append(with_instances(REFERENCE_KIND, count))
        benches = r.benches + (["footprint"] if self.footprint else [])
        return with_flags(None, StudyFlags(env=envs, bench=benches, trials=r.trials,
                                           quick=r.quick))

    def _runner_step(self, study) -> str:
        prepared = prepare(study)
        outcome = Runner(self.store, console=self.console,
                         show_progress=self.show_progress).start(prepared)
        if outcome.status == "interrupted":
            raise KeyboardInterrupt
        return outcome.run_id

    def _fits(self, count: int) -> tuple[bool, float | None]:
        made = environments.create(with_instances(self.request.spec, count))
        need = made.host_memory_reserved()
        avail = self._available()
        return (avail is None or need <= avail), (None if avail is None else avail / 2**20)

    # -- the sweep -----------------------------------------------------------------------
    def run(self) -> DensityReport:
        """Step by step until the rule, the maximum, the time, the memory or a failure ends
        it; with a store, the sweep is stored as a run of its own as it goes (SweepRecord):
        its id said when it starts, each step kept as it finishes, Ctrl-C keeping those."""
        r = self.request
        report = DensityReport(environment=r.spec, schedule=r.schedule, max_count=r.max_count,
                               trials=r.trials, quick=r.quick,
                               rule=DensityRule(per_guest_floor=r.floor, min_gain=r.min_gain),
                               started=now().isoformat())
        book = SweepRecord(self.store, r) if self.store is not None else None
        if book is not None:
            book.open(report)
            self._say(f"density sweep {book.run_id}: `virtbench report {book.run_id}` reads "
                      "it (each step is stored as it finishes)")
        curves: dict[tuple[str, str], DensityCurve] = {}
        try:
            reason = self._steps(report, curves, book)
        except KeyboardInterrupt:
            self._finish(report, curves, "interrupted")
            if book is not None:
                book.close(report, "interrupted")
                done = max((len(c.steps) for c in report.curves), default=0)
                self._say(f"density sweep {book.run_id} interrupted: its {done} finished "
                          f"step(s) are kept (`virtbench report {book.run_id}`)")
            raise
        self._finish(report, curves, reason)
        if book is not None:
            book.close(report, "complete")
        return report

    def _say(self, line: str) -> None:
        if self.console is not None:
            self.console.print(line, highlight=False, markup=False, soft_wrap=True)

    def _steps(self, report: DensityReport, curves: dict, book) -> str | None:
        """Run the steps; why the sweep ended (None: every judged curve stopped)."""
        r = self.request
        t0, count = time.monotonic(), 1
        while count <= r.max_count:
            if time.monotonic() - t0 > r.max_s:
                return "time"
            fits, avail_mib = self._fits(count)
            if not fits:
                return "memory"
            try:
                run_id = self._run_step(self._study(count))
            except VirtbenchError as exc:       # the steps before keep their figures
                report.failure = f"step {count}: {exc}"
                return "failed"
            if not self._take(run_id, count, avail_mib, curves):
                report.failure = (f"step {count} (run {run_id}): no trial of the environment "
                                  "gave a sample")
                return "failed"
            for curve in curves.values():
                judge_curve(curve, self.rule)
            report.curves = ordered(curves)
            if book is not None:
                book.step(run_id, report)
            judged = [c for c in curves.values() if not c.reference]
            if judged and all(c.stop_reason for c in judged):
                return None
            count = dens.next_count(count, r.schedule)
        return "max"

    def _take(self, run_id: str, count: int, avail_mib: float | None, curves: dict) -> bool:
        """The step's throughputs added to their curves; False when the environment swept
        gave none."""
        step_report = analyze_run(self.store, run_id)
        got_any = False
        for env in step_report.environments:
            ref = env.kind == REFERENCE_KIND and self.reference
            base_spec = REFERENCE_KIND if ref else self.request.spec
            for case_label, name, metric in self._labels(step_report):
                step = step_of(step_report, env.label, case_label, metric, count)
                if step is None:
                    continue
                got_any = got_any or not ref
                step.host_available_mib = avail_mib
                step.pss_mib, step.overhead_mib = memory_of(step_report, env.label, count)
                curve = curves.setdefault((base_spec, case_label), DensityCurve(
                    environment=base_spec, benchmark=case_label, metric=metric,
                    unit=unit_of(name, metric), reference=ref))
                curve.steps.append(step)
        return got_any

    @staticmethod
    def _finish(report: DensityReport, curves: dict, reason: str | None) -> None:
        """Every curve still scaling ends with the sweep's reason; the sweep's stop."""
        for curve in curves.values():
            if curve.stop_reason is None:
                curve.stop_reason = reason
                if reason:
                    curve.why = f"{curve.why}; the sweep ended: {dens.STOP_REASONS[reason]}"
        judged = [c for c in curves.values() if not c.reference]
        report.stop_reason = reason or (judged[0].stop_reason if judged else None)
        report.curves = ordered(curves)
        report.finished = now().isoformat()

    def _labels(self, report: RunReport) -> list[tuple[str, str, str]]:
        """(case label, benchmark name, the metric judged) of the step's cases."""
        metric_of = {parse_bench_spec(text)[0]: metric for text, metric in self.cases}
        return [(c.label, c.name, metric_of[c.name]) for c in report.benchmarks
                if c.name in metric_of]


def ordered(curves: dict) -> list[DensityCurve]:
    """The curves as the report lists them: the judged first, by benchmark."""
    return sorted(curves.values(), key=lambda c: (c.reference, c.benchmark))


def unit_of(bench_name: str, metric: str) -> str:
    """The throughput's unit: a rate's own; a time's as jobs per second."""
    for m in get_bench(bench_name).metrics:
        if m.name == metric:
            return m.unit if m.higher_is_better else "jobs/s"
    return ""
