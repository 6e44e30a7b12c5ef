"""The verdict matrix every report opens with (as the RIKEN study's Table 15): one row per
metric, one column per environment, each cell the change against its reference and ✓ / ✗ /
? (with the blocks that would decide). The change is the overhead in % while it is within
±50 % ("+15.8 %"), beyond that the factor ("41.7× slower": analysis/headline.py), so that 18×
and 41× do not both read as "+95 %". `values=True` puts each row's value before it (the
terminal's compact table). Pure: the formats style it."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...core.metric_id import GROUP_DETAIL, INSTANCE
from ..analysis import headline
from ...foundations.model import Result, RunReport
from .fmt import numbers, tables, verdicts


@dataclass(frozen=True)
class Cell:
    text: str
    verdict: str | None          # pass / fail / inconclusive / None (no verdict)


@dataclass(frozen=True)
class Matrix:
    columns: list[str]           # environment labels, with " (vs REF)" when not the baseline
    rows: list[tuple[str, list[Cell]]]


def change(vs, higher_is_better: bool = True, unit: str = "s") -> str:
    """The change against the reference: overhead % inside ±PCT_LIMIT, else the factor."""
    o = vs.overhead_pct
    if o is not None and math.isfinite(o) and abs(o) < headline.PCT_LIMIT:
        return numbers.pct(o)
    slow = headline.slowdown(vs.ratio, higher_is_better)
    if slow is None:
        return numbers.pct(o) if o is not None and math.isfinite(o) else "n/a"
    return headline.factor_words(slow, unit)[2]


def vs_cell(vs, higher_is_better: bool = True, unit: str = "s") -> Cell:
    """A comparison as a cell: its change and ✓ / ✓ differs / ✗ / ?."""
    text = change(vs, higher_is_better, unit)
    factor = "×" in text
    if vs.verdict == "pass":
        return Cell(f"{text} ✓", "pass")
    if vs.verdict == verdicts.DIFFERS:
        return Cell(f"{text} ✓ differs", "differs")
    if vs.verdict == "fail":
        return Cell(f"{text} ✗" + ("" if factor or not vs.direction else f" {vs.direction}"),
                    "fail")
    need = vs.trials_needed
    return Cell(f"{text} ?" + (f" ≥{need} {verdicts.need_unit(vs)}" if need else ""),
                "inconclusive")


def cell(result: Result | None, baseline: str | None, values: bool = False) -> Cell:
    if result is None:
        return Cell("—", None)
    value = f"{numbers.value(result.trimmed_mean)} " if values and result.n else ""
    vs = result.vs_baseline
    if vs:
        c = vs_cell(vs, result.higher_is_better, result.unit)
        return Cell(value + c.text, c.verdict)
    if result.no_verdict:
        return Cell(value + result.no_verdict, None)
    if result.environment == baseline:
        return Cell(value.strip() or "baseline", None)
    return Cell(value.strip() or "—", None)


_RANK = {"fail": 3, "inconclusive": 2, verdicts.DIFFERS: 1.5, "pass": 1}


def per_instance_cell(rows: list[Result]) -> Cell | None:
    """A group's instances against the single baseline, in one cell: the range of their
    ratios and the worst verdict among them."""
    rows = [r for r in rows if r.vs_baseline]
    if not rows:
        return None
    worst = max(rows, key=lambda r: _RANK.get(r.vs_baseline.verdict, 0))
    c = cell(worst, None)
    mark = " ".join(w for w in c.text.split() if w in ("✓", "✗", "?", "differs"))
    ends = sorted(rows, key=lambda r: r.vs_baseline.overhead_pct)
    lo, hi = (change(r.vs_baseline, r.higher_is_better, r.unit) for r in (ends[0], ends[-1]))
    span = lo if lo == hi else f"{lo} to {hi}"
    return Cell(f"{span} {mark} per instance".replace("  ", " "), c.verdict)


def build(analysis, values: bool = False) -> Matrix:
    analysis = RunReport.of(analysis)
    baseline = analysis.run.baseline
    results = analysis.results
    envs = [e.label for e in analysis.environments
            if any(r.environment == e.label for r in results)]
    index = {(r.environment, r.benchmark, r.metric): r for r in results}
    keys: list[tuple[str, str]] = []
    for r in results:
        key = (r.benchmark, r.metric)
        if key in keys or r.metric_id.scope in GROUP_DETAIL:
            continue
        keys.append(key)
    refs: dict[str, set[str]] = {e: set() for e in envs}
    rows = []
    for bench, metric in keys:
        first = next(r for r in results if (r.benchmark, r.metric) == (bench, metric))
        name = f"{bench} · {metric} {tables.direction(first.higher_is_better)}"
        cells = []
        for env in envs:
            r = index.get((env, bench, metric))
            if r and r.vs_baseline and r.vs_baseline.reference:
                refs[env].add(r.vs_baseline.reference)
            c = cell(r, baseline, values)
            if r is not None and r.vs_baseline is None and r.no_verdict:
                inst = [x for x in results if x.environment == env and x.benchmark == bench
                        and x.metric_id.scope == INSTANCE and x.metric_id.base == metric]
                c = per_instance_cell(inst) or c
            cells.append(c)
        rows.append((name, cells))
    columns = [env + "".join(f" (vs {ref})" for ref in sorted(refs[env]) if ref != baseline)
               for env in envs]
    # the environments' further references (the study's `versus`): a column each
    others = list(dict.fromkeys((r.environment, vs.reference) for r in results
                                for vs in r.vs_others))
    if others:
        columns += [f"{env} vs {ref}" for env, ref in others]
        for (bench, metric), (_, cells) in zip(keys, rows):
            for env, ref in others:
                r = index.get((env, bench, metric))
                vs = next((v for v in r.vs_others if v.reference == ref), None) if r else None
                cells.append(vs_cell(vs, r.higher_is_better, r.unit) if vs else Cell("—", None))
    return Matrix(columns, rows)


LEGEND = ("change against the reference: overhead %, positive = worse whatever the metric's "
          "direction (paired: from the geometric mean of the blocks' ratios), beyond ±50 % "
          "as a factor (\"41.7× slower\"); ✓ equivalent within the threshold; ✓ differs: a real "
          "difference, within the threshold; ✗ outside it, worse or better than the reference; "
          "? the samples cannot decide (≥N: blocks, or trials per side, that would); "
          "\"A vs B\": A against its own reference B (the study's versus); instances: the "
          "aggregate against the baseline at the same N when the run has it, else each "
          "instance against the single baseline (\"per instance\")")
