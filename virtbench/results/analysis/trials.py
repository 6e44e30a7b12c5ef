"""A run's trials in its report: how many ran and failed, the warnings failures call for, what
each failed trial kept, and how a group of instances made each aggregate. Pure."""
from __future__ import annotations

from collections import defaultdict

from ...foundations.model import FailedTrial, RunWarning, TrialCount


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


def trial_counts(trials: list[dict], planned: int | None) -> list[TrialCount]:
    """Per environment x benchmark of a run's (measured, not warm-up) trials, in run order:
    planned, ok, failed; `planned` is the study's trials per case (None when the stored study
    does not say). Pure."""
    out: dict[tuple[str, str], dict] = {}
    for t in trials:
        key = (t["environment"], t["benchmark"])
        row = out.setdefault(key, {"environment": key[0], "benchmark": key[1],
                                   "planned": planned, "ok": 0, "failed": 0})
        row["ok" if t["status"] == "ok" else "failed"] += 1
    for row in out.values():
        if row["planned"] is not None:
            row["planned"] = max(row["planned"], row["ok"] + row["failed"])
    return [TrialCount(**row) for row in out.values()]


def failure_line(failed: int, planned: int | None) -> str:
    """`n of m trials failed; the figures are from the survivors` (pure)."""
    of = f" of {planned}" if planned else ""
    return f"{failed}{of} trials failed; the figures are from the survivors"


def failure_warnings(counts: list[TrialCount], trials: list[dict]) -> list[RunWarning]:
    """A `failed_trials` warning per environment x benchmark where some trials failed and
    some did not (dropping failed trials biases the figures: a guest that fails its slow
    trials looks fast), and `all_trials_failed` where none survived. Pure."""
    out = []
    for c in counts:
        if not c.failed:
            continue
        env, bench = c.environment, c.benchmark
        if c.ok:
            out.append(RunWarning(environment=env, benchmark=bench, kind="failed_trials",
                                  message=failure_line(c.failed, c.planned)))
            continue
        last = next(t["error"] for t in reversed(trials)
                    if t["environment"] == env and t["benchmark"] == bench and t["status"] != "ok")
        of = f" of {c.planned}" if c.planned else ""
        out.append(RunWarning(environment=env, benchmark=bench, kind="all_trials_failed",
                              message=f"all {c.failed}{of} trial(s) failed; last error: {last}"))
    return out


# how much of a failed trial's output a report shows (the store keeps the last 64 KiB)
REPORT_TAIL_CHARS = 2000


def failed_trial_evidence(trials: list[dict], samples: list[dict]) -> list[FailedTrial]:
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
        out.append(FailedTrial(
            environment=t["environment"], benchmark=t["benchmark"], trial=t["trial"] + 1,
            error=t["error"], exit=t["exit"],
            samples=measured.get((t["environment"], t["benchmark"], t["trial"]), {}),
            stdout_tail=(t.get("stdout") or "")[-REPORT_TAIL_CHARS:],
            stderr_tail=(t.get("stderr") or "")[-REPORT_TAIL_CHARS:],
            stdout_bytes=detail.get("stdout_bytes"), stderr_bytes=detail.get("stderr_bytes")))
    return out


def migration_timelines(trials: list[dict], samples: list[dict]) -> list:
    """Each successful migrate trial's timeline from its detail and its samples (benchmark
    migrate), in run order (pure)."""
    from ...foundations.model.run import MigrationTimeline
    values: dict[tuple, dict[str, float]] = defaultdict(dict)
    for s in samples:
        values[(s["environment"], s["benchmark"], s["trial"])][s["metric"]] = s["value"]
    out = []
    for t in trials:
        d = (t.get("detail") or {}).get("migrate") if t.get("status") == "ok" else None
        if not isinstance(d, dict) or not d.get("converged") or not d.get("timeline"):
            continue
        qemu = d.get("qemu") or {}
        v = values[(t["environment"], t["benchmark"], t["trial"])]
        out.append(MigrationTimeline(
            environment=t["environment"], benchmark=t["benchmark"], trial=t["trial"] + 1,
            total_s=qemu.get("total_s"), downtime_s=qemu.get("downtime_s"),
            downtime_guest_s=v.get("downtime_guest_s"), gap_at_s=d.get("gap_at_s"),
            work_lost_s=v.get("work_lost_s"), points=d["timeline"]))
    return out
