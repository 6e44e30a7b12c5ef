"""Machine-readable exports: JSON (interface.md's shape) and CSV (one row per sample)."""
from __future__ import annotations

import csv
import io
import json

from ..model import Record
from . import fmt


def to_json(data) -> str:
    """A model (or a mapping) as indented JSON, as it always was written."""
    if isinstance(data, Record):
        data = data.model_dump()
    return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"


def to_csv(analysis: dict) -> str:
    """One row per sample of a successful trial (failed trials' evidence is in the JSON
    report), with its row's failed / planned trials: easy to load in a spreadsheet or pandas."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["run", "environment", "benchmark", "metric", "unit", "higher_is_better",
                "sample_index", "value", "trimmed_mean", "median", "ci_low", "ci_high",
                "overhead_pct", "verdict", "direction", "trials_needed", "reference", "method_note",
                "failed_trials", "planned_trials", "aggregate"])
    run = analysis["run"]["id"]
    notes = {m["benchmark"]: m["note"] for m in analysis.get("method_notes") or []}
    for r in analysis["results"]:
        vs = r["vs_baseline"] or {}
        for i, v in enumerate(r["samples"]):
            w.writerow([run, r["environment"], r["benchmark"], r["metric"], r["unit"],
                        int(r["higher_is_better"]), i, repr(v), r["trimmed_mean"], r["median"],
                        r["ci_low"], r["ci_high"], vs.get("overhead_pct"),
                        vs.get("verdict") or fmt.verdict_cell(r, analysis["run"]["baseline"]),
                        vs.get("direction"), vs.get("trials_needed"), vs.get("reference"),
                        notes.get(r["benchmark"]), r["failed_trials"], r.get("planned_trials"),
                        r.get("aggregate")])
    return buf.getvalue()


def profiles_to_csv(analysis: dict) -> str:
    """One row per profiled guest function (reasons as rows with an empty address)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["run", "environment", "benchmark", "source", "duration_s", "reason", "address",
                "function", "caller", "device", "count", "share_pct", "time_share_pct"])
    run = analysis["run"]["id"]
    for e in analysis.get("profiles") or []:
        head = [run, e["environment"], e["benchmark"], e["source"], e["duration_s"]]
        for r in e["by_reason"]:
            w.writerow(head + [r["reason"], "", "", "", "", r["count"], r["share_pct"],
                               r.get("time_share_pct")])
        for f in e["by_function"]:
            w.writerow(head + ["", f["address"], f["function"], f["caller"], f.get("device"),
                               f["count"], f["share_pct"], ""])
    return buf.getvalue()


def compare_to_csv(comparison: dict) -> str:
    buf = io.StringIO()
    cols = ["environment", "benchmark", "metric", "unit", "a", "b", "n_a", "n_b", "change_pct",
            "ci_low", "ci_high", "p_value", "verdict", "trials_needed", "message"]
    w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in comparison["rows"]:
        w.writerow(r)
    return buf.getvalue()
