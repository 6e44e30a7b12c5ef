"""Runs lined up into series: one point per run, keyed by host, environment (its label:
`name=` keeps it across a change of options or versions), benchmark case with its
parameters, quick sizes or not, and metric. Each run is read by the analysis
(analysis.analyze_run, the run's own report): a value series holds its trimmed mean and
interval, a ratio series its paired ratio to the reference and that interval; a density
sweep's run (`virtbench density`) its knee per judged curve (metric density_knee, guests)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..analysis import analyze_run
from ..analysis.facts.differences import host_facts
from ...foundations.model import RunReport
from ...foundations.model.history import HistoryPoint
from ...foundations.store import DamagedRow, Store


@dataclass(frozen=True)
class SeriesKey:
    kind: str                   # "value" | "ratio"
    host: str | None
    environment: str
    reference: str | None       # a ratio series' reference label
    benchmark: str
    params: str                 # the case's parameters, as sorted JSON
    quick: bool
    metric: str


@dataclass
class Line:
    """A series before detection: its points and, per point, the environments' facts."""
    key: SeriesKey
    unit: str
    higher_is_better: bool
    points: list[HistoryPoint] = field(default_factory=list)
    envs: list[dict] = field(default_factory=list)       # per point: metadata, options
    refs: list[dict | None] = field(default_factory=list)
    case: object = None         # the benchmark case (name, label, params): a separating study's


def _env_facts(report: RunReport) -> dict[str, dict]:
    """Each environment as the fact finder reads it, with its run's host facts."""
    host = host_facts(report.run, list(report.environments))
    return {e.label: {"kind": e.kind, "spec": e.spec, "options": e.options or {},
                      "metadata": e.metadata or {},
                      "host": {**host, "hostname": e.host or host.get("hostname")}}
            for e in report.environments}


def line_up(store: Store, runs: list[dict], threshold_pct: float | None = None,
            wanted=lambda key: True, skipped=lambda line: None) -> list[Line]:
    """The series of `runs` (oldest first), in the order they first appear; `wanted(key)`
    keeps a series or not (the command's filters). A damaged run (a row of it that is not
    what virtbench wrote: store/rows.py, or its stored study: Study.from_dict) is left out,
    its one line handed to `skipped`: the other runs stay readable."""
    lines: dict[SeriesKey, Line] = {}
    for run in runs:
        report = _analyzed(store, run, threshold_pct, skipped)
        if report is None:
            continue
        if report.density is not None:      # a density sweep's run: its knees
            _add_knees(lines, run, report, wanted)
            continue
        facts = _env_facts(report)
        params = {c.label: json.dumps(c.params, sort_keys=True, default=str)
                  for c in report.benchmarks}
        cases = {c.label: c for c in report.benchmarks}
        for r in report.results:
            base = dict(host=run.get("host"), environment=r.environment,
                        benchmark=r.benchmark, params=params.get(r.benchmark, "{}"),
                        quick=bool(run.get("quick")), metric=r.metric)
            common = dict(run=run["id"], series=run.get("series"), n=r.n,
                          samples=list(r.samples),
                          started=run["started"].isoformat() if run.get("started") else None)
            value = SeriesKey(kind="value", reference=None, **base)
            if wanted(value):
                _add(lines, value, r, HistoryPoint(value=r.trimmed_mean, ci_low=r.ci_low,
                                                   ci_high=r.ci_high, **common),
                     facts.get(r.environment, {}), None, cases.get(r.benchmark))
            vs = r.vs_baseline
            if vs is None or not vs.ratio:
                continue
            ratio = SeriesKey(kind="ratio", reference=vs.reference, **base)
            if wanted(ratio):
                _add(lines, ratio, r, HistoryPoint(value=vs.ratio, ci_low=vs.ratio_ci_low,
                                                   ci_high=vs.ratio_ci_high,
                                                   verdict=vs.verdict, **common),
                     facts.get(r.environment, {}), facts.get(vs.reference or "", {}),
                     cases.get(r.benchmark))
    return list(lines.values())


KNEE_METRIC = "density_knee"      # a sweep's series: its most guests within the QoS rule


def _add_knees(lines: dict, run: dict, report: RunReport, wanted) -> None:
    """A density sweep's run: per judged curve, a point of its knee (the most guests at
    once with every guest above the floor and the aggregate still rising) in the series of
    the swept environment x benchmark, metric density_knee; a curve without one adds none."""
    for c in report.density.curves:
        if c.reference or c.knee is None:
            continue
        key = SeriesKey(kind="value", reference=None, host=run.get("host"),
                        environment=c.environment, benchmark=c.benchmark, params="{}",
                        quick=bool(run.get("quick")), metric=KNEE_METRIC)
        if not wanted(key):
            continue
        line = lines.setdefault(key, Line(key, "guests", True))
        line.points.append(HistoryPoint(
            run=run["id"], series=run.get("series"), value=float(c.knee), n=len(c.steps),
            samples=[float(c.knee)],
            started=run["started"].isoformat() if run.get("started") else None))
        line.envs.append({})
        line.refs.append(None)


def _analyzed(store: Store, run: dict, threshold_pct: float | None, skipped
              ) -> RunReport | None:
    """The run's own analysis; None (its line handed to `skipped`) when it is damaged."""
    if run.get("damaged"):
        skipped(run["damaged"])
        return None
    try:
        return analyze_run(store, run["id"], threshold_pct=threshold_pct)
    except DamagedRow as exc:
        skipped(str(exc))
        return None


def _add(lines: dict[SeriesKey, Line], key: SeriesKey, result, point: HistoryPoint,
         env: dict, ref: dict | None, case=None) -> None:
    line = lines.setdefault(key, Line(key, "" if key.kind == "ratio" else result.unit,
                                      result.higher_is_better))
    line.case = line.case or case
    line.points.append(point)
    line.envs.append(env)
    line.refs.append(ref)
