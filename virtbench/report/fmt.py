"""Number and cell formatting shared by every report (pure; reads the result model)."""
from __future__ import annotations

import math

from ..model import CompareRow, Comparison, Result, RunReport, RunWarning


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


def verdict_cell(result: Result, baseline: str | None) -> str:
    """✓/✗/? against the reference (named when it is not the run's baseline); "baseline"
    for the baseline itself; "no like-for-like baseline" for an aggregate of instances the
    run has no baseline at the same N for; "—" for a metric with no counterpart."""
    vs = result.vs_baseline
    if vs:
        mark = verdict_mark(vs.verdict, vs.direction, vs.trials_needed)
        ref = vs.reference
        # a group's rows always name theirs: one instance vs one process, or the same N
        if ref and (ref != baseline or vs.basis in ("per-instance", "same-instances")):
            mark += f" vs {ref}"
        return mark
    if result.no_verdict:
        return result.no_verdict
    return "baseline" if result.environment == baseline else "—"


def metric_cell(r) -> str:
    """`triad_mb_s ↑ (MB/s)`: a result's or comparison row's metric, direction and unit."""
    return f"{r.metric} {direction(r.higher_is_better)} ({r.unit})"


def cv_cell(result: Result) -> str:
    return pct(result.cv * 100, signed=False) if result.cv is not None else "n/a"


def method_note_lines(analysis: RunReport) -> list[str]:
    return [f"{m.benchmark}: {m.note}" for m in analysis.method_notes]


def header_lines(analysis) -> list[str]:
    analysis = RunReport.of(analysis)
    run = analysis.run
    lines = [f"run {run.id} · study {run.study} · {run.status}"
             + (" · QUICK sizes (smoke run, not comparable to full-size figures)" if run.quick else ""),
             f"baseline {run.baseline or '(none)'} · verdict threshold {run.threshold_pct:g} % · "
             f"alpha {run.alpha:g} · "
             f"{run.trials_planned} trials planned · seed {run.seed}"]
    if run.hosts:
        hosts = run.hosts
        lines.append(f"fleet on {len(hosts)} host(s): " + ", ".join(
            f"{r.host} (run {r.id}, {r.status})" for r in run.runs or [])
            + (f" · each host against {hosts[0]}'s same environment" if len(hosts) > 1 else ""))
    for e in analysis.environments:
        md = e.metadata
        bits = [e.label]
        if md.get("cpu_model"):
            bits.append(md["cpu_model"])
        if md.get("kernel"):
            bits.append(md["kernel"])
        if md.get("accel"):
            bits.append(f"accel {md['accel']}")
        if e.boot_s is not None and e.kind != "native":
            bits.append(f"ready in {e.boot_s:.1f} s")
        if e.status == "failed":
            bits.append(f"FAILED: {e.error}")
        if e.note:
            bits.append(f"note: {e.note}")
        lines.append("  " + " · ".join(bits))
    return lines


def where(w: RunWarning) -> str:
    """`environment · benchmark · metric` of a warning, those it names."""
    return " · ".join(x for x in (w.environment, w.benchmark, w.metric) if x)


def inconclusive(analysis: RunReport) -> list[Result]:
    """The results whose verdict the samples could not decide."""
    return [r for r in analysis.results
            if r.vs_baseline and r.vs_baseline.verdict == "inconclusive"]


def ratio(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def published_ratio(pub) -> str:
    """The source's figure: its ratio (≈ when derived from its absolute values) and/or its
    own verdict (a PublishedMatch or a PublishedFigure)."""
    if not pub:
        return "—"
    bits = []
    if pub.ratio is not None:
        bits.append(ratio(pub.ratio))
    elif pub.value is not None:
        bits.append(f"value {value(pub.value)}")
    if pub.verdict:
        bits.append({"pass": "✓", "fail": "✗"}[pub.verdict])
    return " ".join(bits) or "—"


PUBLISHED_COLUMNS = ("measured ratio", "published", "source")


def published_cells(r: Result, baseline: str | None = None) -> list[str]:
    """[measured ratio vs the published figure's reference, published figure, its source]."""
    pub = r.published
    if not pub:
        return ["—", "—", "—"]
    ref = "" if pub.versus in (None, baseline) else f" vs {pub.versus}"
    return [ratio(pub.measured_ratio) + ref, published_ratio(pub), pub.source]


def has_published(analysis: RunReport) -> bool:
    return any(r.published for r in analysis.results) or bool(analysis.published_only)


def published_only_lines(analysis: RunReport) -> list[str]:
    """One line per published figure that no measured result of the run matches."""
    out = []
    for p in analysis.published_only:
        ref = f" vs {p.versus}" if p.versus else ""
        extra = [x for x in (p.unmeasured and f"not measurable here: {p.unmeasured}",
                             p.note) if x]
        why = f" — {'; '.join(extra)}" if extra else ""
        out.append(f"{p.environment} · {p.benchmark} · {p.metric}: "
                   f"{published_ratio(p)}{ref} ({p.source}){why}")
    return out


def difference_lines(comparison: Comparison) -> list[str]:
    """One line per metadata key that differs between the runs or paired environments."""
    out = []
    for d in comparison.metadata_differences:
        where = f"{d.environment}: " if d.environment else ""
        out.append(f"{where}{d.key}: {d.a!r} → {d.b!r}")
    return out


def compare_verdict(r: CompareRow) -> str:
    """A comparison row's verdict, with the trials per side an inconclusive one needs."""
    return r.verdict + (f" (≥ {r.trials_needed} trials)"
                        if r.verdict == "inconclusive" and r.trials_needed else "")


def compare_undecided(comparison: Comparison) -> list[CompareRow]:
    return [r for r in comparison.rows if r.verdict == "inconclusive" and r.message]


def only_in(comparison: Comparison) -> list[tuple[str, list[list[str]]]]:
    """(side, [environment, benchmark, metric]...) of the rows only one run has."""
    return [("A", comparison.only_in_a), ("B", comparison.only_in_b)]
