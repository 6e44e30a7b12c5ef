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


DIFFERS = "differs, within threshold"


def verdict_mark(verdict: str | None, direction: str | None = None,
                 trials_needed: int | None = None, unit: str = "trials") -> str:
    """✓ pass; ✓ differs, within threshold (worse): a real difference inside the band;
    ✗ fail (worse) / ✗ fail (better): which way it is outside the threshold;
    ? inconclusive (≥ N blocks): the samples could not decide."""
    if verdict == "pass":
        return "✓ pass"
    if verdict == DIFFERS:
        return f"✓ {DIFFERS}" + (f" ({direction})" if direction else "")
    if verdict == "fail":
        return "✗ fail" + (f" ({direction})" if direction else "")
    if verdict == "inconclusive":
        return "? inconclusive" + (f" (≥ {trials_needed} {unit})" if trials_needed else "")
    return "baseline"


def need_unit(vs) -> str:
    """What a comparison's trials_needed counts: blocks (paired) or trials per side."""
    return "trials" if vs.analysis in (None, "unpaired") else "blocks"


def vs_mark(vs, baseline: str | None, run_analysis: str | None = None,
            name_reference: bool = True) -> str:
    """A comparison's verdict mark, naming its reference when it is not the baseline (a
    group's rows always name theirs; not when the row's label does) and its analysis when
    not the run's."""
    mark = verdict_mark(vs.verdict, vs.direction, vs.trials_needed, need_unit(vs))
    ref = vs.reference
    if name_reference and ref and (ref != baseline or vs.basis in ("per-instance",
                                                                   "same-instances")):
        mark += f" vs {ref}"
    if run_analysis and vs.analysis and vs.analysis != run_analysis:
        mark += f" ({vs.analysis})"
    return mark


def verdict_cell(result: Result, baseline: str | None, run_analysis: str | None = None) -> str:
    """✓/✗/? against the reference (named when it is not the run's baseline); "baseline"
    for the baseline itself; "no like-for-like baseline" for an aggregate of instances the
    run has no baseline at the same N for; "—" for a metric with no counterpart."""
    vs = result.vs_baseline
    if vs:
        return vs_mark(vs, baseline, run_analysis)
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
             f"baseline {run.baseline or '(none)'}"
             + (f" (chosen for this report; the study's: {run.study_baseline})"
                if run.study_baseline else "")
             + f" · verdict threshold {run.threshold_pct:g} % · "
             f"alpha {run.alpha:g} · "
             + (f"{run.trials_planned} trials planned · " if run.trials_planned is not None
                else "") + f"seed {run.seed}",
             analysis_line(analysis)]
    lines += [line for line in (adaptive_line(run), sections_line(run)) if line]
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


def comparisons(result: Result) -> list:
    """A result's comparisons: against its reference, then its further references."""
    return ([result.vs_baseline] if result.vs_baseline else []) + list(result.vs_others)


def inconclusive(analysis: RunReport) -> list[tuple[Result, object]]:
    """(result, comparison) of every comparison the samples could not decide."""
    return [(r, vs) for r in analysis.results for vs in comparisons(r)
            if vs.verdict == "inconclusive"]


def inconclusive_lines(analysis: RunReport) -> list[str]:
    baseline = analysis.run.baseline
    return [f"{r.environment} · {r.benchmark} · {r.metric}"
            + (f" vs {vs.reference}" if vs.reference != baseline else "") + f": {vs.message}"
            for r, vs in inconclusive(analysis)]


def seed_cell(vs) -> str:
    """The seed's rule on trimmed means: its overhead and ✓ / ✗."""
    rule = vs.seed_rule if vs else None
    if rule is None or rule.overhead_pct is None:
        return "—"
    return f"{pct(rule.overhead_pct)} {'✓' if rule.verdict == 'pass' else '✗'}"


def adjusted_p(vs, correction: str | None) -> float | None:
    """The p of 'no difference' after the run's correction."""
    if vs is None:
        return None
    return vs.p_bh if correction == "bh" else vs.p_holm


def mdc_cell(vs) -> str:
    return "—" if vs is None or vs.mdc_pct is None else f"{vs.mdc_pct:.1f} %"


CORRECTIONS = {"holm": "Holm", "bh": "Benjamini-Hochberg", None: "none"}


def family_size(analysis: RunReport) -> int:
    return sum(1 for r in analysis.results for vs in comparisons(r) if vs.p_value is not None)


ANALYSES = {"paired": "paired blocks (each block's ratio to its reference, geometric mean, t "
                      "interval, sign-flip p)",
            "sequential": "paired blocks read with confidence sequences (adaptive trials)",
            "unpaired": "unpaired (ratio of trimmed means, bootstrap interval, permutation p)"}


def adaptive_line(run) -> str | None:
    """How adaptive trials ended: why, after how long, the blocks the cases got, and the
    cases a bound left undecided."""
    a = run.adaptive
    if a is None:
        return None
    counts = [n for per_case in a.blocks.values() for n in per_case.values()]
    blocks = (f"{min(counts)}" if min(counts) == max(counts) else f"{min(counts)}-{max(counts)}"
              ) if counts else "?"
    spent = f" after {a.spent_s:.0f} s" if a.spent_s is not None else ""
    budget = f" of a {a.budget_s:.0f} s budget" if a.budget_s else ""
    return (f"adaptive trials ({a.min_trials}..{a.max_trials} blocks): "
            f"{a.stopped or 'not stopped (interrupted?)'}{spent}{budget}; {blocks} blocks per case"
            + _undecided_part(a.undecided))


def _undecided_part(undecided: dict) -> str:
    if not undecided:
        return ""
    if len(undecided) > 4:
        return f"; {len(undecided)} case(s) still undecided (the `undecided` warning names them)"
    return f"; still undecided: {', '.join(undecided)}"


def sections_line(run) -> str | None:
    """The cases whose measured section, shorter than the minimum, was repeated in each
    trial (their values are per repetition)."""
    short = [s for s in run.sections if s.repetitions > 1 or s.capped]
    if not short:
        return None
    parts = [f"{s.benchmark} " + (f"{s.section_s:.3g} s " if s.section_s is not None else "")
             + f"x {s.repetitions}"
             + (" (capped, still short)" if s.capped else "") for s in short]
    return (f"short measured sections, repeated in each trial to {short[0].min_section_s:g} s "
            f"(values per repetition): {', '.join(parts)}")


def analysis_line(analysis: RunReport) -> str:
    run = analysis.run
    unpaired = sum(1 for r in analysis.results for vs in comparisons(r)
                   if vs.analysis == "unpaired") if run.analysis != "unpaired" else 0
    return (f"verdicts: {ANALYSES.get(run.analysis, run.analysis)}; "
            f"{CORRECTIONS.get(run.correction, run.correction)} over "
            f"{family_size(analysis)} comparisons"
            + (f"; {unpaired} compared unpaired (marked)" if unpaired else ""))


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


CLAIM_MARKS = {"holds": "✓ holds", "does not hold": "✗ does not hold",
               "inconclusive": "? inconclusive", "not measured": "— not measured"}


def claim_lines(analysis: RunReport) -> list[str]:
    """One line per claim of the study: its status, the claim, where, and why."""
    return [f"{CLAIM_MARKS.get(c.status, c.status)}: {c.text} ({c.source}; {c.benchmark} · "
            f"{c.metric}: {c.holds_if}) — {c.message}" for c in analysis.claims]


def compare_verdict(r: CompareRow) -> str:
    """A comparison row's verdict, with the trials per side an inconclusive one needs."""
    return r.verdict + (f" (≥ {r.trials_needed} trials)"
                        if r.verdict == "inconclusive" and r.trials_needed else "")


def compare_undecided(comparison: Comparison) -> list[CompareRow]:
    return [r for r in comparison.rows if r.verdict == "inconclusive" and r.message]


def only_in(comparison: Comparison) -> list[tuple[str, list[list[str]]]]:
    """(side, [environment, benchmark, metric]...) of the rows only one run has."""
    return [("A", comparison.only_in_a), ("B", comparison.only_in_b)]


def comparison_columns(correction: str | None) -> list[str]:
    """The columns of a comparison in the per-benchmark tables (comparison_cells)."""
    return ["seed rule", "overhead", "overhead CI", "p", f"p {CORRECTIONS.get(correction, 'adj')}",
            "MDC"]


def comparison_cells(vs, correction: str | None) -> list[str]:
    """The seed rule (trimmed means, ✓/✗), the verdict's overhead and (1 - alpha) interval,
    the raw and adjusted p of 'no difference', the minimal detectable change."""
    if vs is None:
        return ["—"] * 6
    return [seed_cell(vs), pct(vs.overhead_pct), ci_pct(vs.ci_low, vs.ci_high), p(vs.p_value),
            p(adjusted_p(vs, correction)), mdc_cell(vs)]


def other_label(vs) -> str:
    """The environment cell of a further comparison's row: `↳ vs REF`."""
    return f"↳ vs {vs.reference}"


def footer(analysis: RunReport) -> str:
    """What the comparison columns mean, for every format's foot."""
    run = analysis.run
    alpha = f"{run.alpha:g}"
    conf = f"{(1 - run.alpha) * 100:g} %"
    return ("Trimmed mean: the seed method (drop the highest and the lowest sample, mean of the "
            "rest); seed rule: its ratio of trimmed means, ✓ within "
            f"±{run.threshold_pct:g} %, ✗ not (the seed's own verdict, no statistics). Overhead: "
            "the verdict's estimate, positive = worse than the reference whatever the metric's "
            f"direction, with its {conf} interval; p: raw p of 'no difference'; "
            f"p {CORRECTIONS.get(run.correction, 'adj')}: adjusted over the run's "
            f"{family_size(analysis)} comparisons; MDC: the smallest change these blocks "
            f"detect with 80 % power (no difference means none this large). Verdicts at alpha "
            f"{alpha} by {ANALYSES.get(run.analysis, run.analysis)} (docs/decisions.md).")
