"""From stored samples to results: per environment x benchmark x metric, the statistics and
the comparison against its reference (see references.py), as the result model
(virtbench/model) that every report format renders."""
from __future__ import annotations

import zlib
from collections import defaultdict
from dataclasses import replace

from .. import benchmarks, stats
from ..errors import VirtbenchError
from ..metric_id import MetricId, identify
from ..model import (AdaptiveSummary, Case, Environment, MethodNote, MetricIdentity, Result,
                     RunInfo, RunReport, RunWarning, Section)
from ..stats.multiplicity import METHODS as CORRECTIONS
from ..store import Store
from ..study import default_baseline
from . import decide
from .claims import check_claims, labels_by_spec
from .pricelist import price_lists
from .profiles import profile_entries
from .published import attach_published
from .references import References
from .rows import disturbed_trials, rows_of
from .trials import (REPORT_TAIL_CHARS, aggregate_methods, failed_trial_evidence,  # noqa: F401
                     failure_line, failure_warnings, migration_timelines, trial_counts)

from ..defaults import ALPHA as DEFAULT_ALPHA


def _seed(*parts: str) -> int:
    """A stable seed per result, so a report is the same every time it is made."""
    return zlib.crc32("\x1f".join(parts).encode())


def _num(x):
    return None if x is None else float(x)


def _metric_order(study: dict):
    """A sort key for (case label, metric identity): the benchmark's declaration order, with
    the metrics a group of instances derives from one (`triad_mb_s_i0`...) right after it."""
    declared = {}
    for case in study["benchmarks"]:
        bench = benchmarks.REGISTRY.get(case["name"])
        declared[case["label"]] = [m.name for m in bench.metrics] if bench else []

    def key(label: str, metric: MetricId) -> tuple[int, int]:
        names = declared.get(label, [])
        if metric.base in names:
            return (names.index(metric.base), 0 if metric.name == metric.base else 1)
        return (len(names), 0)
    return key


def _identities(samples: list[dict]) -> dict[tuple[str, str, str], MetricId]:
    """(environment, benchmark, metric) -> its identity, as stored with each sample; for a
    store-like source without it, read from the row's metric names (metric_id.identify)."""
    out: dict[tuple[str, str, str], MetricId] = {}
    bare: dict[tuple[str, str], set[str]] = defaultdict(set)
    for s in samples:
        key = (s["environment"], s["benchmark"], s["metric"])
        if s.get("scope"):
            out[key] = MetricId(s["metric"], s.get("base_metric") or s["metric"], s["scope"],
                                s.get("instance"))
        else:
            bare[key[:2]].add(s["metric"])
    for (env, bench), names in bare.items():
        for name, mid in identify(names).items():
            out.setdefault((env, bench, name), mid)
    return out


def run_settings(run: dict) -> tuple[float, dict[str, str]]:
    """(alpha, {benchmark label: method note}) of a stored run: from its run metadata when
    the store keeps one (`meta`), else from the stored study (alpha, each benchmark's
    method_note); alpha 0.05 and no notes by default."""
    meta = run.get("meta") or run.get("metadata") or {}
    study = run.get("study") or {}
    alpha = meta.get("alpha", study.get("alpha"))
    notes = meta.get("method_notes") or study.get("method_notes") or {
        b["label"]: b["method_note"] for b in study.get("benchmarks", []) if b.get("method_note")}
    return float(alpha) if alpha is not None else DEFAULT_ALPHA, dict(notes)


def analysis_mode(study: dict, analysis: str | None) -> str:
    """The analysis the verdicts use: as asked (`--analysis`), else the study's (`analysis`
    key, paired by default); a paired analysis of a run whose trials were adaptive
    (`trials = "auto"`) reads its blocks with confidence sequences ("sequential")."""
    mode = analysis or study.get("analysis") or "paired"
    if mode not in ("paired", "unpaired"):
        raise VirtbenchError(f"analysis {mode!r}: use paired or unpaired")
    if mode == "paired" and adaptive(study):
        return "sequential"
    return mode


def correction_of(study: dict, correction: str | None) -> str:
    """The family's correction: as asked (`--correction`), else the study's (`correction`
    key), Holm by default (and for runs stored before studies could say)."""
    chosen = correction or study.get("correction") or "holm"
    if chosen not in CORRECTIONS:
        raise VirtbenchError(f"correction {chosen!r}: use {' or '.join(CORRECTIONS)}")
    return chosen


def adaptive(study: dict) -> bool:
    """Were the run's trials adaptive? The runner stores `adaptive: true` (and the plan's
    min_trials as `trials`); a study dict as written may still say trials = "auto"."""
    return bool(study.get("adaptive")) or study.get("trials") == "auto"


def versus_labels(study: dict, envs: list[dict]) -> dict[str, str]:
    """environment label -> the label of its own reference (the study's `versus`), for
    the environments whose entry has one and whose reference ran."""
    label_of = labels_by_spec(envs)
    out = {}
    for e in envs:
        entry = study_entry(study, e)
        ref = label_of.get(entry.get("versus")) if entry and entry.get("versus") else None
        if ref and ref != e["label"]:
            out[e["label"]] = ref
    return out


def analyze_run(store: Store, run_id: str | None = None, threshold_pct: float | None = None,
                references=None, baseline: str | None = None,
                analysis: str | None = None, correction: str | None = None) -> RunReport:
    """`references(baseline, environments)` chooses each row's reference (default
    References: the run's baseline); a fleet's report passes host-against-host ones.
    `baseline`: another of the run's environment labels to compare against (`report
    --baseline`); `analysis`: paired or unpaired (default: the study's, paired);
    `correction`: holm or bh over the family (default: the study's, holm)."""
    run = store.get_run(run_id)
    run_id = run["id"]
    study = run["study"]
    threshold = threshold_pct if threshold_pct is not None else study.get("threshold_pct", 10.0)
    alpha, notes = run_settings(run)
    mode = analysis_mode(study, analysis)
    correction = correction_of(study, correction)
    envs = store.environments(run_id)
    labels = [e["label"] for e in envs]
    study_baseline = default_baseline(study.get("baseline"), labels)
    if baseline is not None and baseline not in labels:
        raise VirtbenchError(f"--baseline {baseline}: run {run_id} has no such environment; "
                             f"its environments: {', '.join(labels)}")
    chosen = baseline if baseline is not None else study_baseline
    refs = (references or References)(chosen, envs)
    versus = versus_labels(study, envs)
    trials = store.trials(run_id)
    planned_trials = study.get("trials") if isinstance(study.get("trials"), int) \
        and not adaptive(study) else None
    counts = trial_counts(trials, planned_trials)
    methods = aggregate_methods(trials)
    failed = {(c.environment, c.benchmark): c.failed for c in counts}
    planned = {(c.environment, c.benchmark): c.planned for c in counts}
    samples = store.samples(run_id)
    rows = rows_of(samples, disturbed_trials(trials))
    ids = _identities(samples)

    bench_order = [b["label"] for b in study["benchmarks"]]
    metric_order = _metric_order(study)
    # failed trials first: dropping them biases what follows
    results: list[Result] = []
    warnings = [RunWarning.of(w) for w in store.warnings(run_id)] + \
        failure_warnings(counts, trials) + disturbed_warnings(rows)
    keys = sorted(rows, key=lambda k: (bench_order.index(k[1]) if k[1] in bench_order else 99,
                                       k[1], metric_order(k[1], ids[k]), k[2],
                                       labels.index(k[0]) if k[0] in labels else 99))
    pending: list[tuple[Result, bool, decide.Pending]] = []   # (row, baseline?, comparison)
    for env, bench, metric in keys:
        row = rows[(env, bench, metric)]
        values = row.values
        summary = stats.summarize(values, seed=_seed(run_id, env, bench, metric))
        mid = ids[(env, bench, metric)]
        ref = refs.for_row(env, mid)
        result = Result(
            environment=env, benchmark=bench, metric=metric, unit=row.unit,
            higher_is_better=row.higher_is_better, n=summary.n, samples=values,
            trials=row.trials, failed_trials=failed.get((env, bench), 0),
            planned_trials=planned.get((env, bench)),
            aggregate=methods.get((env, bench, metric)),
            trimmed_mean=summary.trimmed_mean, median=summary.median,
            stdev=_num(summary.stdev), cv=_num(summary.cv),
            ci_low=_num(summary.ci_low), ci_high=_num(summary.ci_high),
            disturbed=row.disturbed,
            metric_id=MetricIdentity(base=mid.base, scope=mid.scope, instance=mid.instance))
        results.append(result)
        base_made, no_ratio = False, False
        ref_row = rows.get((ref.label, bench, ref.metric)) if ref.label else None
        if ref_row is not None and ref_row.values and stats.trimmed_mean(ref_row.values) == 0:
            # no ratio to a zero (no retransmits on the baseline, say): the figures stand alone
            ref = replace(ref, note=f"{ref.label}'s {ref.metric} is 0 (trimmed mean): no ratio "
                                    "or overhead against it", short="no ratio (reference is 0)")
        elif ref_row is not None and ref_row.values and values:
            made = _compare(row, ref_row, ref.label, ref.metric, ref.basis, mode, threshold,
                            alpha, run_id, (env, bench, metric), ref.basis != "host",
                            ref.label if ref.metric is None or ref.basis != "per-instance"
                            else f"{ref.label} ({ref.metric})")
            if isinstance(made, str):
                ref, no_ratio = replace(ref, note=made, short="no ratio"), True
            else:
                pending.append((result, True, made))
                base_made = True
        if not base_made:
            result.reference_note, result.no_verdict = ref.note, ref.short
        other = versus.get(env)
        other_row = rows.get((other, bench, metric)) if other else None
        if other_row is not None and other != ref.label and other_row.values and values \
                and stats.trimmed_mean(other_row.values) != 0:
            made = _compare(row, other_row, other, metric, "versus", mode, threshold, alpha,
                            run_id, (env, bench, metric), True, other)
            if not isinstance(made, str):
                pending.append((result, False, made))
        if ref.note and not base_made and no_ratio:
            warnings.append(RunWarning(environment=env, benchmark=bench, metric=metric,
                                       kind="no_ratio", message=ref.note))
        elif ref.note and not base_made and ref.basis != "none":
            warnings.append(RunWarning(environment=env, benchmark=bench, metric=metric,
                                       kind="zero_reference", message=ref.note))
        elif ref.note and not base_made and not any(
                w.kind == "no_like_for_like_baseline" and w.environment == env
                and w.benchmark == bench for w in warnings):
            warnings.append(RunWarning(environment=env, benchmark=bench,
                                       kind="no_like_for_like_baseline", message=ref.note))
        for kind, message in stats.noise_warnings(values, row.trials):
            # too few samples is a property of the trial, not of each metric: say it once
            if kind == "few_samples" and any(w.kind == kind and w.environment == env
                                             and w.benchmark == bench for w in warnings):
                continue
            warnings.append(RunWarning(environment=env, benchmark=bench,
                                       metric=None if kind == "few_samples" else metric,
                                       kind=kind, message=message))
    for (result, is_base, _), vs in zip(pending, decide.finish([p for _, _, p in pending],
                                                               correction)):
        if is_base:
            result.vs_baseline = vs
        else:
            result.vs_others.append(vs)
        if vs.order is not None and vs.order.significant:
            warnings.append(RunWarning(
                environment=result.environment, benchmark=result.benchmark,
                metric=result.metric, kind="order_effect",
                message=f"against {vs.reference}: {vs.order.message}, Holm-adjusted p "
                        f"{vs.order.p_holm:.3g}; the random order makes it noise, not bias "
                        f"(order-balanced ratio {vs.order.balanced_ratio:.3f})"))
    for e in envs:
        md = e.get("metadata") or {}
        if e["label"] == chosen and md.get("hypervisor_flag"):
            warnings.append(RunWarning(
                environment=e["label"], kind="baseline_virtualized",
                message="the baseline itself runs under a hypervisor "
                        f"({md.get('virtualization') or 'CPUID hypervisor bit set'}); "
                        "overheads are relative to that, not to bare metal"))
    published_only = attach_published(study.get("published") or [], envs, results,
                                      study_baseline)
    claims = check_claims(study.get("claims") or [], envs, rows, mode=mode,
                          threshold_pct=threshold, alpha=alpha, run_id=run_id)
    profiles = profile_entries(store.profiles(run_id), results)
    cases = [Case(label=b["label"], name=b["name"], params=b.get("params") or {})
             for b in study["benchmarks"]]
    return RunReport(
        run=RunInfo(id=run_id, study=run["study_name"],
                    started=run["started"].isoformat() if run["started"] else None,
                    finished=run["finished"].isoformat() if run["finished"] else None,
                    quick=bool(run["quick"]), status=run["status"], seed=run["seed"],
                    baseline=chosen, threshold_pct=threshold, alpha=alpha,
                    analysis=mode, correction=correction,
                    study_baseline=study_baseline if chosen != study_baseline else None,
                    trials_planned=planned_trials,
                    adaptive=adaptive_summary(run.get("detail") or {}),
                    sections=sections_of(run.get("detail") or {}),
                    virtbench_version=run["virtbench_version"], host=run["host"],
                    fleet=run.get("fleet")),
        benchmarks=cases,
        environments=[Environment(label=e["label"], kind=e["kind"], spec=e["spec"],
                                  options=e["options"], status=e["status"], error=e["error"],
                                  boot_s=e["boot_s"], metadata=e["metadata"] or {},
                                  note=environment_note(study, e)) for e in envs],
        results=results,
        trial_counts=counts,
        failed_trial_evidence=failed_trial_evidence(trials, store.samples(
            run_id, include_failed=True)),
        warnings=warnings,
        method_notes=[MethodNote(benchmark=b, note=n) for b, n in notes.items()],
        published_only=published_only,
        profiles=profiles,
        claims=claims,
        price_lists=price_lists(cases, [e["label"] for e in envs], chosen, results, profiles,
                                warnings),
        migrations=migration_timelines(trials, samples))


def _compare(row, ref_row, label, metric, basis, mode, threshold, alpha, run_id, key,
             same_run, shown):
    return decide.compare(row, ref_row, mode=mode, same_run=same_run, threshold_pct=threshold,
                          alpha=alpha, seed=_seed(run_id, *key, "vs", label),
                          reference=label, reference_metric=metric, basis=basis,
                          shown_reference=shown)


def disturbed_warnings(rows) -> list[RunWarning]:
    """A `disturbed_trials` warning per environment x benchmark with trials left out."""
    seen: dict[tuple[str, str], dict[int, str]] = {}
    for (env, bench, _), row in rows.items():
        for d in row.disturbed:
            seen.setdefault((env, bench), {})[d.trial] = d.reason
    return [RunWarning(environment=env, benchmark=bench, kind="disturbed_trials",
                       message=f"{len(why)} trial(s) left out of the statistics as disturbed: "
                               + "; ".join(f"trial {t}: {r}" for t, r in sorted(why.items())))
            for (env, bench), why in seen.items()]


def study_entry(study: dict, env: dict) -> dict | None:
    """The study file's [[environment]] entry this environment was made from (matched by
    its spec, or the entry it stands for when a target measured it); pure."""
    from ..study import normalize_spec
    wanted = set()
    for spec in (env["spec"], (env["metadata"] or {}).get("stands_for")):
        if spec:
            wanted.add(spec)
            try:
                wanted.add(normalize_spec(spec))
            except Exception:       # a spec this version no longer parses
                pass
    for entry in study.get("environments") or []:
        if entry.get("spec") in wanted:
            return entry
    return None


def environment_note(study: dict, env: dict) -> str | None:
    """The study file's `note` of the environment entry this environment was made from
    (matched by its spec, or the entry it stands for when a target measured it); pure."""
    wanted = {env["spec"], (env["metadata"] or {}).get("stands_for")}
    for entry in study.get("environments") or []:
        if entry.get("note") and entry.get("spec") in wanted:
            return entry["note"]
    return None


def adaptive_summary(detail: dict) -> AdaptiveSummary | None:
    """The run detail's "adaptive" record (virtbench/adaptive.py) for the report."""
    rec = detail.get("adaptive")
    if not rec:
        return None
    return AdaptiveSummary(**{k: rec.get(k) for k in ("stopped", "spent_s", "budget_s",
                                                      "min_trials", "max_trials")},
                           blocks=rec.get("blocks") or {}, undecided=rec.get("undecided") or {})


def sections_of(detail: dict) -> list[Section]:
    """The run detail's "calibration" record (virtbench/sections.py), one per case."""
    return [Section(benchmark=case, environment=c.get("environment") or "",
                    section_s=c.get("section_s"), repetitions=int(c.get("repetitions") or 1),
                    min_section_s=c.get("min_section_s", 0.5), capped=bool(c.get("capped")))
            for case, c in sorted((detail.get("calibration") or {}).items())]
