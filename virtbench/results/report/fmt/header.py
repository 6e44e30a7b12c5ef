"""The lines around a run's tables: the run, its analysis, adaptive trials; the footer."""
from __future__ import annotations

from ....foundations.model import RunReport
from . import verdicts

CORRECTIONS = {"holm": "Holm", "bh": "Benjamini-Hochberg", None: "none"}
ANALYSES = {"paired": "paired blocks (each block's ratio to its reference, geometric mean, t "
                      "interval, sign-flip p)",
            "sequential": "paired blocks read with confidence sequences (adaptive trials)",
            "unpaired": "unpaired (ratio of trimmed means, bootstrap interval, permutation p)"}


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
    if run.density_sweep:
        lines.append(f"a step of density sweep {run.density_sweep} (`virtbench report "
                     f"{run.density_sweep}` shows the sweep)")
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


def family_size(analysis: RunReport) -> int:
    return sum(1 for r in analysis.results for vs in verdicts.comparisons(r)
               if vs.p_value is not None)


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
    unpaired = sum(1 for r in analysis.results for vs in verdicts.comparisons(r)
                   if vs.analysis == "unpaired") if run.analysis != "unpaired" else 0
    return (f"verdicts: {ANALYSES.get(run.analysis, run.analysis)}; "
            f"{CORRECTIONS.get(run.correction, run.correction)} over "
            f"{family_size(analysis)} comparisons"
            + (f"; {unpaired} compared unpaired (marked)" if unpaired else ""))


def footer(analysis: RunReport) -> str:
    """What the comparison columns mean, for every format's foot."""
    run = analysis.run
    alpha = f"{run.alpha:g}"
    conf = f"{(1 - run.alpha) * 100:g} %"
    return ("Trimmed mean: the published method (drop the highest and the lowest sample, mean of the "
            "rest); published: the published rule, its ratio of trimmed means, ✓ within "
            f"±{run.threshold_pct:g} %, ✗ not (the published studies' own verdict, no statistics). Overhead: "
            "the verdict's estimate, positive = worse than the reference whatever the metric's "
            f"direction, with its {conf} interval; p: the p of the claim the verdict makes "
            f"(pass, fail: inside or beyond ±{run.threshold_pct:g} %; differs: a difference; "
            f"inconclusive: the claim it could not make); "
            f"p {CORRECTIONS.get(run.correction, 'adj')}: that p adjusted over the run's "
            f"{family_size(analysis)} comparisons; MDC: the smallest change these blocks "
            f"detect with 80 % power (no difference means none this large). Verdicts at alpha "
            f"{alpha} by {ANALYSES.get(run.analysis, run.analysis)} (docs/decisions.md).")

