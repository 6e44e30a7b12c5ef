"""A measured section repeated inside one trial (pyperf's loops): how long a section took,
how many repetitions reach a minimum, and the repetitions of one trial as one outcome. Pure.

A kernel whose measured section is shorter than the minimum (default 0.5 s,
defaults.MIN_SECTION_S) measures mostly the timer, the scheduler and the first moments of a
process. Such a trial runs the kernel k times in a row, with the same parameters (the ones
the published study fixed stay fixed), and reports per repetition: the trial's value of a metric
is the mean of its k values, arithmetic for a time or any lower-is-better metric and
harmonic for a rate (each is total time, or total work over total time, divided by k when
the repetitions do the same work), and the k values are kept in the trial's detail.

The length of a section is read off what the tool stamps (`Benchmark.timing`: the measured
blocks on CLOCK_MONOTONIC), from the first block's start to the last block's end; a tool
that stamps nothing has no known section and is never repeated.
"""
from __future__ import annotations

from math import ceil

from ...core.outcome import Metric, TrialOutcome

SECTION_KEYS = ("repetitions", "section_s", "repetition_section_s", "per_repetition")


def section_s(bench, stdout: str) -> float | None:
    """How long the measured section of one run of `bench` lasted, from its stamps; None
    when the output stamps none."""
    try:
        timing = bench.timing(stdout) if stdout else None
    except Exception:           # noqa: BLE001 - a parser that cannot read it: no stamps
        return None
    if timing is None:
        return None
    spans = [s for blocks in timing.spans.values() for s in blocks]
    if not spans:
        return None
    return max(s.end for s in spans) - min(s.start for s in spans)


def repetitions_for(section: float | None, min_section_s: float, most: int) -> int:
    """Repetitions of a `section`-second section that reach `min_section_s` (at least 1, at
    most `most`); 1 when the section is unknown or the minimum is off (0)."""
    if section is None or min_section_s <= 0 or section >= min_section_s:
        return 1
    if section <= 0:
        return most
    return max(1, min(most, ceil(min_section_s / section - 1e-9)))   # 0.5 / 0.1: 5, not 6


def mean_value(values: list[float], higher_is_better: bool) -> float:
    """Arithmetic mean of times (lower is better), harmonic mean of rates."""
    if higher_is_better:
        if any(v <= 0 for v in values):
            return sum(values) / len(values)       # a rate of 0: the harmonic mean is 0 anyway
        return len(values) / sum(1.0 / v for v in values)
    return sum(values) / len(values)


def combine(outcomes: list[TrialOutcome], metrics: tuple[Metric, ...],
            sections: list[float | None]) -> TrialOutcome:
    """The repetitions of one trial as one outcome: ok only when every repetition was; its
    values the per-repetition means; the output of all (`== repetition i` between them);
    the detail says how many, each section's length and each value."""
    if len(outcomes) == 1:
        out = outcomes[0]
        out.detail = {**out.detail, "repetitions": 1,
                      **({"section_s": round(sections[0], 6)} if sections[0] is not None else {})}
        return out
    stdout = "\n".join(f"== repetition {i + 1}\n{o.stdout}" for i, o in enumerate(outcomes))
    stderr = "\n".join(f"== repetition {i + 1}\n{o.stderr}" for i, o in enumerate(outcomes))
    warnings: list[tuple[str, str]] = []
    for o in outcomes:
        warnings += [w for w in o.warnings if w not in warnings]
    last = outcomes[-1]
    cpu = [o.cpu_s for o in outcomes]
    out = TrialOutcome(stdout=stdout, stderr=stderr, exit=last.exit, warnings=warnings,
                       wall_s=sum(o.wall_s or 0.0 for o in outcomes),
                       cpu_s=None if None in cpu else sum(cpu),
                       detail=dict(outcomes[0].detail))
    good = [o for o in outcomes if o.ok]
    per = {m.name: [o.values[m.name] for o in good if m.name in o.values] for m in metrics}
    known = [s for s in sections if s is not None]
    out.detail.update({
        "repetitions": len(outcomes),
        "per_repetition": {name: values for name, values in per.items() if values},
        "repetition_section_s": [None if s is None else round(s, 6) for s in sections]})
    if known:
        out.detail["section_s"] = round(sum(known), 6)
    means = {m.name: mean_value(per[m.name], m.higher_is_better) for m in metrics if per[m.name]}
    if len(good) == len(outcomes):
        out.values = means
        return out
    bad_i, bad = next((i, o) for i, o in enumerate(outcomes) if not o.ok)
    out.error = (bad.error if len(outcomes) == 1 or bad.error.startswith("agent lost")
                 else f"repetition {bad_i + 1} of {len(outcomes)}: {bad.error}")
    out.exit = bad.exit
    out.partial = {**bad.partial, **means}      # what the good repetitions measured: evidence
    return out
