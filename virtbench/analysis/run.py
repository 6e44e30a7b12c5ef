"""From stored samples to results: per environment x benchmark x metric, the statistics and
the comparison against its reference (see references.py), in the shape of interface.md's
JSON report."""
from __future__ import annotations

import zlib
from collections import defaultdict
from dataclasses import replace

from .. import benchmarks, stats
from ..metric_id import MetricId, identify
from ..store import Store
from ..study import default_baseline
from .profiles import profile_entries
from .references import References

DEFAULT_ALPHA = 0.05


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
                 ref) -> dict:
    """vs_baseline of interface.md: the comparison with its verdict, power and reference."""
    cmp = stats.compare(values, ref_values, hib, threshold, seed=seed, alpha=alpha,
                        reference=ref.label if ref.metric is None or ref.basis != "per-instance"
                        else f"{ref.label} ({ref.metric})")
    return {"ratio": cmp.ratio, "overhead_pct": cmp.overhead_pct,
            "ci_low": cmp.ci_low, "ci_high": cmp.ci_high,
            "ratio_ci_low": cmp.ratio_ci_low, "ratio_ci_high": cmp.ratio_ci_high,
            "p_value": cmp.p_value, "verdict": cmp.verdict, "direction": cmp.direction,
            "power": cmp.power, "trials_needed": cmp.trials_needed, "message": cmp.message,
            "alpha": alpha, "threshold_pct": threshold,
            "reference": ref.label, "reference_metric": ref.metric, "basis": ref.basis}


def analyze_run(store: Store, run_id: str | None = None, threshold_pct: float | None = None,
                references=None) -> dict:
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
    failed = {(c["environment"], c["benchmark"]): c["failed"] for c in counts}
    planned = {(c["environment"], c["benchmark"]): c["planned"] for c in counts}
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
    results, warnings = [], list(store.warnings(run_id)) + failure_warnings(counts, trials)
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
        results.append({
            "environment": env, "benchmark": bench, "metric": metric, "unit": unit,
            "higher_is_better": hib, "n": summary.n, "samples": values,
            "trials": trial_no[(env, bench, metric)],
            "failed_trials": failed.get((env, bench), 0),
            "planned_trials": planned.get((env, bench)),
            "aggregate": methods.get((env, bench, metric)),
            "trimmed_mean": summary.trimmed_mean, "median": summary.median,
            "stdev": _num(summary.stdev), "cv": _num(summary.cv),
            "ci_low": _num(summary.ci_low), "ci_high": _num(summary.ci_high),
            "vs_baseline": vs, "reference_note": None if vs else ref.note,
            "no_verdict": None if vs else ref.short,
            "metric_id": {"base": mid.base, "scope": mid.scope, "instance": mid.instance},
        })
        if ref.note and not vs and ref.basis != "none":
            warnings.append({"environment": env, "benchmark": bench, "metric": metric,
                             "kind": "zero_reference", "message": ref.note})
        elif ref.note and not vs and not any(w["kind"] == "no_like_for_like_baseline"
                                           and w["environment"] == env and w["benchmark"] == bench
                                           for w in warnings):
            warnings.append({"environment": env, "benchmark": bench, "metric": None,
                             "kind": "no_like_for_like_baseline", "message": ref.note})
        for kind, message in stats.noise_warnings(values, trial_no[(env, bench, metric)]):
            # too few samples is a property of the trial, not of each metric: say it once
            if kind == "few_samples" and any(w["kind"] == kind and w["environment"] == env
                                             and w["benchmark"] == bench for w in warnings):
                continue
            warnings.append({"environment": env, "benchmark": bench,
                             "metric": None if kind == "few_samples" else metric,
                             "kind": kind, "message": message})
    for e in envs:
        md = e.get("metadata") or {}
        if e["label"] == baseline and md.get("hypervisor_flag"):
            warnings.append({"environment": e["label"], "benchmark": None, "metric": None,
                             "kind": "baseline_virtualized",
                             "message": "the baseline itself runs under a hypervisor "
                                        f"({md.get('virtualization') or 'CPUID hypervisor bit set'}); "
                                        "overheads are relative to that, not to bare metal"})
    published_only = _attach_published(study.get("published") or [], envs, results, baseline)
    return {
        "run": {"id": run_id, "study": run["study_name"],
                "started": run["started"].isoformat() if run["started"] else None,
                "finished": run["finished"].isoformat() if run["finished"] else None,
                "quick": bool(run["quick"]), "status": run["status"], "seed": run["seed"],
                "baseline": baseline, "threshold_pct": threshold, "alpha": alpha,
                "trials_planned": study["trials"], "virtbench_version": run["virtbench_version"],
                "host": run["host"], "fleet": run.get("fleet")},
        "benchmarks": [{"label": b["label"], "name": b["name"], "params": b.get("params") or {}}
                       for b in study["benchmarks"]],
        "environments": [{"label": e["label"], "kind": e["kind"], "spec": e["spec"],
                          "options": e["options"], "status": e["status"], "error": e["error"],
                          "boot_s": e["boot_s"], "metadata": e["metadata"] or {},
                          "note": environment_note(study, e)} for e in envs],
        "results": results,
        "trial_counts": counts,
        "failed_trial_evidence": failed_trial_evidence(trials, store.samples(
            run_id, include_failed=True)),
        "warnings": warnings,
        "method_notes": [{"benchmark": b, "note": n} for b, n in notes.items()],
        "published_only": published_only,
        "profiles": profile_entries(store.profiles(run_id), results),
    }


def aggregate_methods(trials: list[dict]) -> dict[tuple[str, str, str], str]:
    """(environment, benchmark, metric) -> how a group of instances made that aggregate, from
    its successful trials' detail ("common-interval", "sum", "makespan", "slowest", "mean";
    "mixed: a, b" when trials differ). Pure."""
    seen: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for t in trials:
        if t["status"] != "ok":
            continue
        for metric, method in ((t.get("detail") or {}).get("aggregate") or {}).items():
            key = (t["environment"], t["benchmark"], metric)
            if method not in seen[key]:
                seen[key].append(method)
    return {k: v[0] if len(v) == 1 else "mixed: " + ", ".join(v) for k, v in seen.items()}


def trial_counts(trials: list[dict], planned: int | None) -> list[dict]:
    """Per environment x benchmark of a run's (measured, not warm-up) trials, in run order:
    {environment, benchmark, planned, ok, failed}; `planned` is the study's trials per case
    (None when the stored study does not say). Pure."""
    out: dict[tuple[str, str], dict] = {}
    for t in trials:
        key = (t["environment"], t["benchmark"])
        row = out.setdefault(key, {"environment": key[0], "benchmark": key[1],
                                   "planned": planned, "ok": 0, "failed": 0})
        row["ok" if t["status"] == "ok" else "failed"] += 1
    for row in out.values():
        if row["planned"] is not None:
            row["planned"] = max(row["planned"], row["ok"] + row["failed"])
    return list(out.values())


def failure_line(failed: int, planned: int | None) -> str:
    """`n of m trials failed; the figures are from the survivors` (pure)."""
    of = f" of {planned}" if planned else ""
    return f"{failed}{of} trials failed; the figures are from the survivors"


def failure_warnings(counts: list[dict], trials: list[dict]) -> list[dict]:
    """A `failed_trials` warning per environment x benchmark where some trials failed and
    some did not (dropping failed trials biases the figures: a guest that fails its slow
    trials looks fast), and `all_trials_failed` where none survived. Pure."""
    out = []
    for c in counts:
        if not c["failed"]:
            continue
        env, bench = c["environment"], c["benchmark"]
        if c["ok"]:
            out.append({"environment": env, "benchmark": bench, "metric": None,
                        "kind": "failed_trials",
                        "message": failure_line(c["failed"], c["planned"])})
            continue
        last = next(t["error"] for t in reversed(trials)
                    if t["environment"] == env and t["benchmark"] == bench and t["status"] != "ok")
        of = f" of {c['planned']}" if c["planned"] else ""
        out.append({"environment": env, "benchmark": bench, "metric": None,
                    "kind": "all_trials_failed",
                    "message": f"all {c['failed']}{of} trial(s) failed; last error: {last}"})
    return out


# how much of a failed trial's output a report shows (the store keeps the last 64 KiB)
REPORT_TAIL_CHARS = 2000


def failed_trial_evidence(trials: list[dict], samples: list[dict]) -> list[dict]:
    """Every failed trial with what it kept: its error, exit status, the values it measured
    before it failed (evidence, never in the statistics) and the end of its output. Pure."""
    measured: dict[tuple[str, str, int], dict[str, dict]] = defaultdict(dict)
    for s in samples:
        if s.get("status", "ok") != "ok":
            measured[(s["environment"], s["benchmark"], s["trial"])][s["metric"]] = {
                "value": s["value"], "unit": s["unit"],
                "higher_is_better": bool(s["higher_is_better"])}
    out = []
    for t in trials:
        if t["status"] == "ok":
            continue
        detail = t.get("detail") or {}
        out.append({"environment": t["environment"], "benchmark": t["benchmark"],
                    "trial": t["trial"] + 1, "error": t["error"], "exit": t["exit"],
                    "samples": measured.get((t["environment"], t["benchmark"], t["trial"]), {}),
                    "stdout_tail": (t.get("stdout") or "")[-REPORT_TAIL_CHARS:],
                    "stderr_tail": (t.get("stderr") or "")[-REPORT_TAIL_CHARS:],
                    "stdout_bytes": detail.get("stdout_bytes"),
                    "stderr_bytes": detail.get("stderr_bytes")})
    return out


def environment_note(study: dict, env: dict) -> str | None:
    """The study file's `note` of the environment entry this environment was made from
    (matched by its spec, or the entry it stands for when a target measured it); pure."""
    wanted = {env["spec"], (env["metadata"] or {}).get("stands_for")}
    for entry in study.get("environments") or []:
        if entry.get("note") and entry.get("spec") in wanted:
            return entry["note"]
    return None


def _attach_published(published: list[dict], envs: list[dict], results: list[dict],
                      baseline: str | None) -> list[dict]:
    """Put the study's published figure beside each measured result it belongs to, as
    result["published"] = {ratio, verdict, source, versus, measured_ratio, ...}; the measured
    ratio is against the same reference as the published one (the baseline unless `versus`).
    Returns the published figures no result of this run matches (e.g. a Xen environment
    virtbench could not start), so that reports can still show them."""
    from ..study import normalize_spec
    label_of = {}
    for e in envs:
        for spec in (e["spec"], (e.get("metadata") or {}).get("stands_for")):
            if not spec:
                continue
            try:
                label_of[normalize_spec(spec)] = e["label"]
            except Exception:   # a spec this version no longer parses: leave it unmatched
                continue
    for r in results:
        r.setdefault("published", None)
    by_key = {(r["environment"], r["benchmark"], r["metric"]): r for r in results}
    unmatched = []
    for p in published:
        label = label_of.get(p["environment"])
        versus = label_of.get(p["versus"]) if p.get("versus") else baseline
        r = by_key.get((label, p["benchmark"], p["metric"])) if label else None
        if r is None:
            unmatched.append(dict(p))
            continue
        ref = by_key.get((versus, p["benchmark"], p["metric"])) if versus else None
        measured = None
        if ref is not None and ref["trimmed_mean"]:
            measured = r["trimmed_mean"] / ref["trimmed_mean"]
        r["published"] = {"ratio": p.get("ratio"), "ratio_derived": p.get("ratio_derived", False),
                          "value": p.get("value"), "versus_value": p.get("versus_value"),
                          "verdict": p.get("verdict"), "source": p["source"], "note": p.get("note"),
                          "versus": versus, "measured_ratio": measured}
    return unmatched
