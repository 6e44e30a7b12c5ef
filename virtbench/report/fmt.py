"""Number formatting shared by every report."""
from __future__ import annotations

import math


def value(x: float | None) -> str:
    """Four significant digits, no exponent for ordinary magnitudes."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    ax = abs(x)
    if ax >= 1e6 or (ax < 1e-3 and ax != 0):
        return f"{x:.3e}"
    if ax >= 1000:
        return f"{x:,.0f}"
    return f"{x:.4g}"


def pct(x: float | None, signed: bool = True) -> str:
    if x is None:
        return "n/a"
    return f"{x:+.1f} %" if signed else f"{x:.1f} %"


def ci_pct(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "n/a"
    return f"[{low:+.1f}, {high:+.1f}]"


def ci(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "n/a"
    return f"[{value(low)}, {value(high)}]"


def p(x: float | None) -> str:
    if x is None:
        return "n/a"
    return "<0.001" if x < 0.001 else f"{x:.3f}"


def direction(higher_is_better: bool) -> str:
    return "↑" if higher_is_better else "↓"


def verdict_mark(verdict: str | None, direction: str | None = None,
                 trials_needed: int | None = None) -> str:
    """✓ pass; ✗ fail (worse) / ✗ fail (better): which way it is outside the threshold;
    ? inconclusive (≥ N trials): the samples could not decide."""
    if verdict == "pass":
        return "✓ pass"
    if verdict == "fail":
        return "✗ fail" + (f" ({direction})" if direction else "")
    if verdict == "inconclusive":
        return "? inconclusive" + (f" (≥ {trials_needed} trials)" if trials_needed else "")
    return "baseline"


def verdict_cell(result: dict, baseline: str | None) -> str:
    """✓/✗/? against the reference (named when it is not the run's baseline); "baseline"
    for the baseline itself; "no like-for-like baseline" for an aggregate of instances the
    run has no baseline at the same N for; "—" for a metric with no counterpart."""
    vs = result["vs_baseline"]
    if vs:
        mark = verdict_mark(vs["verdict"], vs.get("direction"), vs.get("trials_needed"))
        ref = vs.get("reference")
        # a group's rows always name theirs: one instance vs one process, or the same N
        if ref and (ref != baseline or vs.get("basis") in ("per-instance", "same-instances")):
            mark += f" vs {ref}"
        return mark
    if result.get("no_verdict"):
        return result["no_verdict"]
    return "baseline" if result["environment"] == baseline else "—"


def method_note_lines(analysis: dict) -> list[str]:
    return [f"{m['benchmark']}: {m['note']}" for m in analysis.get("method_notes") or []]


def header_lines(analysis: dict) -> list[str]:
    run = analysis["run"]
    lines = [f"run {run['id']} · study {run['study']} · {run['status']}"
             + (" · QUICK sizes (smoke run, not comparable to full-size figures)" if run["quick"] else ""),
             f"baseline {run['baseline'] or '(none)'} · verdict threshold {run['threshold_pct']:g} % · "
             f"alpha {run.get('alpha', 0.05):g} · "
             f"{run['trials_planned']} trials planned · seed {run['seed']}"]
    if run.get("hosts"):
        hosts = run["hosts"]
        lines.append(f"fleet on {len(hosts)} host(s): " + ", ".join(
            f"{r['host']} (run {r['id']}, {r['status']})" for r in run.get("runs") or [])
            + (f" · each host against {hosts[0]}'s same environment" if len(hosts) > 1 else ""))
    for e in analysis["environments"]:
        md = e["metadata"] or {}
        bits = [e["label"]]
        if md.get("cpu_model"):
            bits.append(md["cpu_model"])
        if md.get("kernel"):
            bits.append(md["kernel"])
        if md.get("accel"):
            bits.append(f"accel {md['accel']}")
        if e.get("boot_s") is not None and e["kind"] != "native":
            bits.append(f"ready in {e['boot_s']:.1f} s")
        if e["status"] == "failed":
            bits.append(f"FAILED: {e['error']}")
        if e.get("note"):
            bits.append(f"note: {e['note']}")
        lines.append("  " + " · ".join(bits))
    return lines


def ratio(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def published_ratio(pub: dict | None) -> str:
    """The source's figure: its ratio (≈ when derived from its absolute values) and/or its
    own verdict."""
    if not pub:
        return "—"
    bits = []
    if pub.get("ratio") is not None:
        bits.append(ratio(pub["ratio"]))
    elif pub.get("value") is not None:
        bits.append(f"value {value(pub['value'])}")
    if pub.get("verdict"):
        bits.append({"pass": "✓", "fail": "✗"}[pub["verdict"]])
    return " ".join(bits) or "—"


PUBLISHED_COLUMNS = ("measured ratio", "published", "source")


def published_cells(r: dict, baseline: str | None = None) -> list[str]:
    """[measured ratio vs the published figure's reference, published figure, its source]."""
    pub = r.get("published")
    if not pub:
        return ["—", "—", "—"]
    ref = "" if pub.get("versus") in (None, baseline) else f" vs {pub['versus']}"
    return [ratio(pub.get("measured_ratio")) + ref, published_ratio(pub), pub["source"]]


def has_published(analysis: dict) -> bool:
    return any(r.get("published") for r in analysis["results"]) or bool(analysis.get("published_only"))


def published_only_lines(analysis: dict) -> list[str]:
    """One line per published figure that no measured result of the run matches."""
    out = []
    for p in analysis.get("published_only") or []:
        ref = f" vs {p['versus']}" if p.get("versus") else ""
        extra = [x for x in (p.get("unmeasured") and f"not measurable here: {p['unmeasured']}",
                             p.get("note")) if x]
        why = f" — {'; '.join(extra)}" if extra else ""
        out.append(f"{p['environment']} · {p['benchmark']} · {p['metric']}: "
                   f"{published_ratio(p)}{ref} ({p['source']}){why}")
    return out


def difference_lines(comparison: dict) -> list[str]:
    """One line per metadata key that differs between the runs or paired environments."""
    out = []
    for d in comparison.get("metadata_differences") or []:
        where = f"{d['environment']}: " if d.get("environment") else ""
        out.append(f"{where}{d['key']}: {d['a']!r} → {d['b']!r}")
    return out
