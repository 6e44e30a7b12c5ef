"""A tune's refinement step decided (docs/tune.md, "Refinement"): a configuration against the
best so far on the tune's first metric, in the blocks both ran, by the run's paired
decision at the tune's minimum effect. One function for the runner (which moves the best on
it, execution/run/refine.py) and the report (which shows it): the same rows, the same
decision."""
from __future__ import annotations

from ...core.decisions import Decided, Direction
from ...foundations.model import Result, RunReport
from ...foundations.model.decision import VsReference
from ...foundations.model.tune import TuneStep
from ...foundations.store import Store
from ...study.design import Study
from .decide import ComparisonInputs, compare, finish
from .rows import Row, disturbed_trials, rows_of


def first_metric(study: Study) -> tuple[str, str] | None:
    """(case label, metric) a refinement decides on: the tune's first metric."""
    for case in study.benchmarks:
        metrics = study.tune.metrics_of(case.name)
        if metrics:
            return case.label, metrics[0]
    return None


def decide_step(row: Row, ref: Row, reference: str, study: Study) -> VsReference | None:
    """`row` against the best so far (`ref`, labelled `reference`): the paired decision at
    the tune's minimum effect and the study's alpha; None without a ratio."""
    inputs = ComparisonInputs(row, ref, reference, None, "versus", reference, True, "paired",
                              study.tune.min_effect_pct, study.alpha, 0)
    pending = compare(inputs)
    if isinstance(pending, str):
        return None
    return finish([pending], None)[0]


def moved(vs: VsReference | None) -> bool:
    """A step moves the best when it is beyond the band on the better side."""
    return vs is not None and vs.verdict == Decided.FAIL and vs.direction == Direction.BETTER


def stored_step(store: Store, run_id: str, study: Study, label: str, reference: str
                ) -> VsReference | None:
    """The step of environment `label` against `reference`, from the stored trials (the
    disturbed left out, as the report leaves them out)."""
    which = first_metric(study)
    if which is None:
        return None
    rows = rows_of(store.samples(run_id), disturbed_trials(store.trials(run_id)))
    row, ref = rows.get((label, *which)), rows.get((reference, *which))
    if row is None or ref is None:
        return None
    return decide_step(row, ref, reference, study)


def _row(result: Result) -> Row:
    return Row(values=list(result.samples), trials=list(result.trials),
               by_block={t - 1: v for t, v in zip(result.trials, result.samples)},
               unit=result.unit, higher_is_better=result.higher_is_better)


def steps(report: RunReport, study: Study, record: dict) -> list[TuneStep]:
    """The refinement's steps as the report shows them, from its record (the run detail's
    `tune_refine`) and the report's rows."""
    which = first_metric(study)
    results = {r.environment: r for r in report.results if which is not None
               and (r.benchmark, r.metric_id.base) == which and r.metric_id.scope == "single"}
    out = []
    for step in record.get("steps") or []:
        row, ref = results.get(step["label"]), results.get(step["reference"])
        vs = (decide_step(_row(row), _row(ref), step["reference"], study)
              if row is not None and ref is not None else None)
        out.append(TuneStep(knob=step["knob"], level=step["level"], environment=step["label"],
                            reference=step["reference"], levels=step["levels"], vs_best=vs,
                            moved=step.get("moved")))
    return out
