"""From stored samples to results: per environment x benchmark x metric, the statistics and
the comparison against its reference (see references.py), as the result model
(virtbench/foundations/model) that every report format renders."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...measure import benchmarks
from ...foundations import stats
from ...core.metric_id import MetricId
from ...foundations.model import (
    Case,
    DeclaredView,
    EnvironmentRecord,
    MethodNote,
    MetricIdentity,
    Result,
    RunInfo,
    RunReport,
    RunWarning,
    TrialCount,
)
from ...foundations.stats.advice import advice_text, trials_to_advise
from ...foundations.store import Store
from ...foundations.store.sweeps import sweep_of
from ...study.design import Study
from . import decide
from .papers.claims import check_claims
from .headline import headlines
from .explain.pricelist import price_lists
from .facts.pairs import attach as attach_differences
from .explain.profiles import profile_entries
from .papers.published import attach_published
from .adaptive_record import reconcile
from .tune import tune_section
from .stored import environment_note, row_header, run_detail, sweep_report
from .references import Reference
from .settings import Settings, identities, result_seed, settings_of
from .rows import Key, Row, disturbed_trials, rows_of
from .row_warnings import (disturbed_warnings, reference_warnings, unmeasured_warnings,
                           virtualized_baseline)
from ..report.words.warning_groups import Host, advice
from ..report.words.warning_groups import attach as attach_groups
from ..report.words.tool_errors import in_words
from .trials import (
    aggregate_methods,
    failed_trial_evidence,
    failure_warnings,
    migration_timelines,
    trial_counts,
)


def _num(x):
    return None if x is None else float(x)


def _metric_order(study: Study):
    """A sort key for (case label, metric identity): the benchmark's declaration order, with
    the metrics a group of instances derives from one (`triad_mb_s_i0`...) right after it."""
    declared = {}
    for case in study.benchmarks:
        bench = benchmarks.REGISTRY.get(case.name)
        declared[case.label] = [m.name for m in bench.metrics] if bench else []

    def key(label: str, metric: MetricId) -> tuple[int, int]:
        names = declared.get(label, [])
        if metric.base in names:
            return (names.index(metric.base), 0 if metric.name == metric.base else 1)
        return (len(names), 0)
    return key


@dataclass(frozen=True)
class _Measured:
    """What the run measured: its trials, their counts, its samples as rows."""
    trials: list[dict]
    counts: list[TrialCount]
    methods: dict[Key, str]         # a group's aggregate: how it was made
    failed: dict[tuple[str, str], int]
    planned: dict[tuple[str, str], int | None]
    samples: list[dict]
    rows: dict[Key, Row]
    ids: dict[Key, MetricId]
    advised: int                    # trials to advise for its compared rows (stats/advice.py)
    cv_advice: str | None           # what applies on its host against a high CV


@dataclass(frozen=True)
class _Pending:
    """A comparison of a result, before the family's correction."""
    result: Result
    against_reference: bool         # vs_baseline; else one of vs_others
    comparison: decide.Pending


def analyze_run(store: Store, run_id: str | None = None, threshold_pct: float | None = None,
                references=None, baseline: str | None = None,
                analysis: str | None = None, correction: str | None = None) -> RunReport:
    """`references(baseline, environments)` chooses each row's reference (default
    References: the run's baseline); a fleet's report passes host-against-host ones.
    `baseline`: another of the run's environment labels to compare against (`report
    --baseline`); `analysis`: paired or unpaired (default: the study's, paired);
    `correction`: holm or bh over the family (default: the study's, holm)."""
    run = store.get_run(run_id)
    swept = sweep_report(run)          # a density sweep's own run: its stored sweep
    if swept is not None:
        return swept
    settings = settings_of(store, run, threshold_pct=threshold_pct, references=references,
                           baseline=baseline, analysis=analysis, correction=correction)
    measured = _measured(store, settings)
    warnings = _run_warnings(store, settings, measured)
    results, pending = _results(settings, measured, warnings)
    warnings += _settle(pending, settings.correction)
    warnings += virtualized_baseline(settings.envs, settings.baseline)
    return _report(store, run, settings, measured, results, warnings)


def _measured(store: Store, s: Settings) -> _Measured:
    """The run's trials with their counts and aggregation methods, and its samples as rows
    (disturbed trials left out) with each metric's identity."""
    trials = store.trials(s.run_id)
    counts = trial_counts(trials, s.planned_trials)
    samples = store.samples(s.run_id)
    rows, ids = rows_of(samples, disturbed_trials(trials)), identities(samples)
    compared = sum(1 for (env, _, _), mid in ((k, ids[k]) for k in rows)
                   if s.refs.for_row(env, mid).label not in (None, env))
    advised = trials_to_advise(compared, s.alpha)
    return _Measured(
        trials=trials, counts=counts, methods=aggregate_methods(trials),
        failed={(c.environment, c.benchmark): c.failed for c in counts},
        planned={(c.environment, c.benchmark): c.planned for c in counts},
        samples=samples, rows=rows, ids=ids, advised=advised,
        cv_advice=advice("high_cv", Host.of_environments(
            [(e["kind"], e["label"], e.get("metadata") or {}) for e in s.envs], s.baseline,
            quick=s.study.quick, trials_planned=s.planned_trials,
            trials_advised=advised)))


def _run_warnings(store: Store, s: Settings, m: _Measured) -> list[RunWarning]:
    """The warnings before any row's: the store's, then failed trials (first: dropping them
    biases what follows), then disturbed trials."""
    return [in_words(RunWarning.of(w)) for w in store.warnings(s.run_id)] + \
        failure_warnings(m.counts, m.trials) + disturbed_warnings(m.rows) + \
        unmeasured_warnings(m.rows)


def _results(s: Settings, m: _Measured, warnings: list[RunWarning]
             ) -> tuple[list[Result], list[_Pending]]:
    """Every row in report order as a Result, with the comparisons it makes (pending the
    family's correction); the rows' warnings go onto `warnings`."""
    results: list[Result] = []
    pending: list[_Pending] = []
    for key in _report_order(s, m):
        result, made = _row(s, m, key, warnings)
        results.append(result)
        pending += made
    return results, pending


def _report_order(s: Settings, m: _Measured) -> list[Key]:
    """The rows' keys in report order: benchmark as the study lists them, metric as the
    benchmark declares them, environment as the run lists them; a row with no sample (every
    trial disturbed: unmeasured_warnings says so) has no figures and is left out."""
    bench_order = [b.label for b in s.study.benchmarks]
    metric_order = _metric_order(s.study)
    return sorted((k for k, row in m.rows.items() if row.values), key=lambda k: (
        bench_order.index(k[1]) if k[1] in bench_order else 99, k[1],
        metric_order(k[1], m.ids[k]), k[2], s.labels.index(k[0]) if k[0] in s.labels else 99))


def _row(s: Settings, m: _Measured, key: Key, warnings: list[RunWarning]
         ) -> tuple[Result, list[_Pending]]:
    """One row: its figures, its comparisons against its reference and the environment's own
    (`versus`), and its warnings (onto `warnings`)."""
    result = _result(s, m, key)
    ref, made, no_ratio = _against_reference(s, m, key)
    pending = [_Pending(result, True, made)] if made is not None else []
    if made is None:
        result.reference_note, result.no_verdict = ref.note, ref.short
        warnings += reference_warnings(key, ref, no_ratio, warnings)
    versus = _against_versus(s, m, key, ref.label)
    if versus is not None:
        pending.append(_Pending(result, False, versus))
    warnings += _noise_warnings(key, m.rows[key], warnings, m)
    return result, pending


def _result(s: Settings, m: _Measured, key: Key) -> Result:
    """A row's figures: the statistics of its samples, before any comparison."""
    env, bench, metric = key
    row = m.rows[key]
    summary = stats.summarize(row.values, seed=result_seed(s.run_id, env, bench, metric))
    mid = m.ids[key]
    return Result(
        environment=env, benchmark=bench, metric=metric, unit=row.unit,
        higher_is_better=row.higher_is_better, n=summary.n, samples=row.values,
        trials=row.trials, failed_trials=m.failed.get((env, bench), 0),
        planned_trials=m.planned.get((env, bench)),
        aggregate=m.methods.get((env, bench, metric)),
        trimmed_mean=summary.trimmed_mean, median=summary.median,
        stdev=_num(summary.stdev), cv=_num(summary.cv),
        ci_low=_num(summary.ci_low), ci_high=_num(summary.ci_high),
        disturbed=row.disturbed,
        metric_id=MetricIdentity(base=mid.base, scope=mid.scope, instance=mid.instance))


def _against_reference(s: Settings, m: _Measured, key: Key
                       ) -> tuple[Reference, decide.Pending | None, bool]:
    """The row against its reference: (the reference, with a note when there is no verdict;
    the comparison, or None; whether there is no ratio to the reference)."""
    env, bench, _ = key
    row = m.rows[key]
    ref = s.refs.for_row(env, m.ids[key])
    ref_row = m.rows.get((ref.label, bench, ref.metric)) if ref.label else None
    if ref_row is None or not ref_row.values:
        return ref, None, False
    if stats.trimmed_mean(ref_row.values) == 0:
        # no ratio to a zero (no retransmits on the baseline, say): the figures stand alone
        return replace(ref, note=f"{ref.label}'s {ref.metric} is 0 (trimmed mean): no ratio "
                                 "or overhead against it",
                       short="no ratio (reference is 0)"), None, False
    if not row.values:
        return ref, None, False
    made = decide.compare(s.comparison(
        key, row, ref_row, reference=ref.label, reference_metric=ref.metric, basis=ref.basis,
        shown_reference=ref.label if ref.metric is None or ref.basis != "per-instance"
        else f"{ref.label} ({ref.metric})", same_run=ref.basis != "host"))
    if isinstance(made, str):
        return replace(ref, note=made, short="no ratio"), None, True
    return ref, made, False


def _against_versus(s: Settings, m: _Measured, key: Key, reference: str | None
                    ) -> decide.Pending | None:
    """The row against the environment's own reference (the study's `versus`), when that is
    not already its reference and has a ratio."""
    env, bench, metric = key
    row = m.rows[key]
    other = s.versus.get(env)
    other_row = m.rows.get((other, bench, metric)) if other else None
    if other_row is None or other == reference or not other_row.values or not row.values \
            or stats.trimmed_mean(other_row.values) == 0:
        return None
    made = decide.compare(s.comparison(
        key, row, other_row, reference=other, reference_metric=metric, basis="versus",
        shown_reference=other, same_run=True))
    return None if isinstance(made, str) else made


def _noise_warnings(key: Key, row: Row, warnings: list[RunWarning], m: _Measured
                    ) -> list[RunWarning]:
    """The row's noise warnings; too few samples is a property of the trial, not of each
    metric: said once per case."""
    env, bench, metric = key
    out: list[RunWarning] = []
    for kind, message in stats.noise_warnings(row.values, row.trials, advice_text(m.advised),
                                         m.cv_advice):
        if kind == "few_samples" and any(w.kind == kind and w.environment == env
                                         and w.benchmark == bench for w in warnings + out):
            continue
        out.append(RunWarning(environment=env, benchmark=bench,
                              metric=None if kind == "few_samples" else metric,
                              kind=kind, message=message))
    return out


def _settle(pending: list[_Pending], correction: str) -> list[RunWarning]:
    """The family's correction over every comparison, each put on its result; the order
    effects that stay significant, as warnings."""
    warnings = []
    for p, vs in zip(pending, decide.finish([p.comparison for p in pending], correction)):
        if p.against_reference:
            p.result.vs_baseline = vs
        else:
            p.result.vs_others.append(vs)
        if vs.order is not None and vs.order.significant:
            warnings.append(RunWarning(
                environment=p.result.environment, benchmark=p.result.benchmark,
                metric=p.result.metric, kind="order_effect",
                message=f"against {vs.reference}: {vs.order.message}, Holm-adjusted p "
                        f"{vs.order.p_holm:.3g}; the random order makes it noise, not bias "
                        f"(order-balanced ratio {vs.order.balanced_ratio:.3f})"))
    return warnings


def _report(store: Store, run: dict, s: Settings, m: _Measured, results: list[Result],
            warnings: list[RunWarning]) -> RunReport:
    """The result model: the run, its results with the published figures, claims, exit
    profiles and price lists beside them."""
    published_only = attach_published(s.study.published, s.envs, results, s.study_baseline)
    claims = check_claims(s.study.claims, s.envs, m.rows, mode=s.mode,
                          threshold_pct=s.threshold, alpha=s.alpha, run_id=s.run_id)
    profiles = profile_entries(store.profiles(s.run_id), results)
    cases = [Case(label=b.label, name=b.name, params=b.params) for b in s.study.benchmarks]
    info = _run_info(run, s, m)
    adaptive_record, warnings = reconcile(info.adaptive, results, warnings)
    report = attach_groups(attach_differences(RunReport(
        run=info.model_copy(update={"adaptive": adaptive_record}),
        headline=headlines(results, s.labels),
        benchmarks=cases,
        environments=[EnvironmentRecord(label=e["label"], kind=e["kind"], spec=e["spec"],
                                        options=e["options"], status=e["status"],
                                        error=e["error"], boot_s=e["boot_s"],
                                        metadata=e["metadata"] or {},
                                        note=environment_note(s.study, e)) for e in s.envs],
        results=results,
        trial_counts=m.counts,
        failed_trial_evidence=failed_trial_evidence(m.trials, store.samples(
            s.run_id, include_failed=True)),
        warnings=warnings,
        method_notes=[MethodNote(benchmark=b, note=n) for b, n in s.notes.items()],
        published_only=published_only,
        profiles=profiles,
        claims=claims,
        price_lists=price_lists(cases, s.labels, s.baseline, results, profiles, warnings),
        migrations=migration_timelines(m.trials, m.samples))))
    report.tune = tune_section(report, s.study, run.get("detail"))
    report.declared = declared_views(s.study)
    return report


def declared_views(study: Study) -> list[DeclaredView]:
    """The study's own figures and tables ([[figure]], [[table]]), as the report carries
    them."""
    return [*(DeclaredView(what="figure", **f) for f in study.figures),
            *(DeclaredView(what="table", **t) for t in study.tables)]


def _run_info(run: dict, s: Settings, m: _Measured) -> RunInfo:
    """The run's header: what it was, and how this report reads it."""
    adaptive, sections, kernels_build = run_detail(run, s.study)
    return RunInfo(**row_header(run), baseline=s.baseline, threshold_pct=s.threshold,
                   alpha=s.alpha, analysis=s.mode, correction=s.correction,
                   study_baseline=s.study_baseline if s.baseline != s.study_baseline else None,
                   trials_planned=s.planned_trials, trials_advised=m.advised,
                   adaptive=adaptive, sections=sections, kernels_build=kernels_build,
                   fleet=run.get("fleet"), density_sweep=sweep_of(run))


