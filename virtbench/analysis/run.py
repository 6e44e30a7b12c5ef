"""From stored samples to results: per environment x benchmark x metric, the statistics and
the comparison against its reference (see references.py), as the result model
(virtbench/model) that every report format renders."""
from __future__ import annotations

import zlib
from collections import defaultdict
from dataclasses import replace

from .. import benchmarks, stats
from ..metric_id import MetricId, identify
from ..model import (Case, Environment, MethodNote, MetricIdentity, Result, RunInfo, RunReport,
                     RunWarning, VsReference)
from ..store import Store
from ..study import default_baseline
from .profiles import profile_entries
from .published import attach_published
from .references import References
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


def vs_reference(values, ref_values, hib: bool, threshold: float, alpha: float, seed: int,
                 ref) -> VsReference:
    """vs_baseline of interface.md: the comparison with its verdict, power and reference."""
    cmp = stats.compare(values, ref_values, hib, threshold, seed=seed, alpha=alpha,
                        reference=ref.label if ref.metric is None or ref.basis != "per-instance"
                        else f"{ref.label} ({ref.metric})")
    return VsReference(
        ratio=cmp.ratio, overhead_pct=cmp.overhead_pct, ci_low=cmp.ci_low, ci_high=cmp.ci_high,
        ratio_ci_low=cmp.ratio_ci_low, ratio_ci_high=cmp.ratio_ci_high, p_value=cmp.p_value,
        verdict=cmp.verdict, direction=cmp.direction, power=cmp.power,
        trials_needed=cmp.trials_needed, message=cmp.message, alpha=alpha,
        threshold_pct=threshold, reference=ref.label, reference_metric=ref.metric,
        basis=ref.basis)


def analyze_run(store: Store, run_id: str | None = None, threshold_pct: float | None = None,
                references=None) -> RunReport:
    """`references(baseline, environments)` chooses each row's reference (default
    References: the run's baseline); a fleet's report passes host-against-host ones."""
    run = store.get_run(run_id)
    run_id = run["id"]
    study = run["study"]
    threshold = threshold_pct if threshold_pct is not None else study.get("threshold_pct", 10.0)
    alpha, notes = run_settings(run)
    envs = store.environments(run_id)
    labels = [e["label"] for e in envs]
    baseline = default_baseline(study.get("baseline"), labels)
    refs = (references or References)(baseline, envs)
    trials = store.trials(run_id)
    counts = trial_counts(trials, study.get("trials"))
    methods = aggregate_methods(trials)
    failed = {(c.environment, c.benchmark): c.failed for c in counts}
    planned = {(c.environment, c.benchmark): c.planned for c in counts}
    groups: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    trial_no: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    meta: dict[tuple[str, str, str], tuple[str, bool]] = {}
    samples = store.samples(run_id)
    for s in samples:
        key = (s["environment"], s["benchmark"], s["metric"])
        groups[key].append(s["value"])
        trial_no[key].append(s["trial"] + 1 if s.get("trial") is not None else len(trial_no[key]) + 1)
        meta[key] = (s["unit"], bool(s["higher_is_better"]))
    ids = _identities(samples)

    bench_order = [b["label"] for b in study["benchmarks"]]
    metric_order = _metric_order(study)
    # failed trials first: dropping them biases what follows
    results: list[Result] = []
    warnings = [RunWarning.of(w) for w in store.warnings(run_id)] + \
        failure_warnings(counts, trials)
    keys = sorted(groups, key=lambda k: (bench_order.index(k[1]) if k[1] in bench_order else 99,
                                         k[1], metric_order(k[1], ids[k]), k[2],
                                         labels.index(k[0]) if k[0] in labels else 99))
    for env, bench, metric in keys:
        values = groups[(env, bench, metric)]
        unit, hib = meta[(env, bench, metric)]
        summary = stats.summarize(values, seed=_seed(run_id, env, bench, metric))
        mid = ids[(env, bench, metric)]
        ref = refs.for_row(env, mid)
        vs = None
        ref_values = groups.get((ref.label, bench, ref.metric)) if ref.label else None
        if ref_values and stats.trimmed_mean(ref_values) == 0:
            # no ratio to a zero (no retransmits on the baseline, say): the figures stand alone
            ref = replace(ref, note=f"{ref.label}'s {ref.metric} is 0 (trimmed mean): no ratio "
                                    "or overhead against it", short="no ratio (reference is 0)")
        elif ref_values:
            vs = vs_reference(values, ref_values, hib, threshold, alpha,
                              _seed(run_id, env, bench, metric, "vs"), ref)
        results.append(Result(
            environment=env, benchmark=bench, metric=metric, unit=unit, higher_is_better=hib,
            n=summary.n, samples=values, trials=trial_no[(env, bench, metric)],
            failed_trials=failed.get((env, bench), 0), planned_trials=planned.get((env, bench)),
            aggregate=methods.get((env, bench, metric)),
            trimmed_mean=summary.trimmed_mean, median=summary.median,
            stdev=_num(summary.stdev), cv=_num(summary.cv),
            ci_low=_num(summary.ci_low), ci_high=_num(summary.ci_high),
            vs_baseline=vs, reference_note=None if vs else ref.note,
            no_verdict=None if vs else ref.short,
            metric_id=MetricIdentity(base=mid.base, scope=mid.scope, instance=mid.instance)))
        if ref.note and not vs and ref.basis != "none":
            warnings.append(RunWarning(environment=env, benchmark=bench, metric=metric,
                                       kind="zero_reference", message=ref.note))
        elif ref.note and not vs and not any(w.kind == "no_like_for_like_baseline"
                                           and w.environment == env and w.benchmark == bench
                                           for w in warnings):
            warnings.append(RunWarning(environment=env, benchmark=bench,
                                       kind="no_like_for_like_baseline", message=ref.note))
        for kind, message in stats.noise_warnings(values, trial_no[(env, bench, metric)]):
            # too few samples is a property of the trial, not of each metric: say it once
            if kind == "few_samples" and any(w.kind == kind and w.environment == env
                                             and w.benchmark == bench for w in warnings):
                continue
            warnings.append(RunWarning(environment=env, benchmark=bench,
                                       metric=None if kind == "few_samples" else metric,
                                       kind=kind, message=message))
    for e in envs:
        md = e.get("metadata") or {}
        if e["label"] == baseline and md.get("hypervisor_flag"):
            warnings.append(RunWarning(
                environment=e["label"], kind="baseline_virtualized",
                message="the baseline itself runs under a hypervisor "
                        f"({md.get('virtualization') or 'CPUID hypervisor bit set'}); "
                        "overheads are relative to that, not to bare metal"))
    published_only = attach_published(study.get("published") or [], envs, results, baseline)
    return RunReport(
        run=RunInfo(id=run_id, study=run["study_name"],
                    started=run["started"].isoformat() if run["started"] else None,
                    finished=run["finished"].isoformat() if run["finished"] else None,
                    quick=bool(run["quick"]), status=run["status"], seed=run["seed"],
                    baseline=baseline, threshold_pct=threshold, alpha=alpha,
                    trials_planned=study["trials"],
                    virtbench_version=run["virtbench_version"], host=run["host"],
                    fleet=run.get("fleet")),
        benchmarks=[Case(label=b["label"], name=b["name"], params=b.get("params") or {})
                    for b in study["benchmarks"]],
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
        profiles=profile_entries(store.profiles(run_id), results),
        migrations=migration_timelines(trials, samples))


def environment_note(study: dict, env: dict) -> str | None:
    """The study file's `note` of the environment entry this environment was made from
    (matched by its spec, or the entry it stands for when a target measured it); pure."""
    wanted = {env["spec"], (env["metadata"] or {}).get("stands_for")}
    for entry in study.get("environments") or []:
        if entry.get("note") and entry.get("spec") in wanted:
            return entry["note"]
    return None
