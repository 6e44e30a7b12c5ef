"""The verdict matrix every report opens with (as the RIKEN study's Table 15): one row per
metric, one column per environment, each cell the change against its reference and ✓ / ✗ /
? (with the blocks that would decide). The change is said as every format says one
(words/change.py): the overhead in % near 1 ("+15.8 %"), the factor from 1.5× on ("41.7×
slower"), so that 18× and 41× do not both read as "+95 %". `values=True` puts each row's
value before it (the terminal's compact table). Pure: the formats style it."""
from __future__ import annotations

from dataclasses import dataclass

from ...core.decisions import Decided
from ...core.metric_id import GROUP_DETAIL, INSTANCE
from ...foundations.model import Result, RunReport
from .fmt import numbers, tables, verdicts
from .words import change as said


@dataclass(frozen=True)
class Cell:
    text: str
    verdict: Decided | None      # the comparison's decision; None: no verdict


@dataclass(frozen=True)
class Matrix:
    columns: list[str]           # environment labels, with " (vs REF)" when not the baseline
    rows: list[tuple[str, list[Cell]]]


def change(vs, higher_is_better: bool = True, unit: str = "s") -> str:
    """The change against the reference, as words/change.py says it in a cell."""
    return said.cell(vs.ratio, higher_is_better, unit, vs.overhead_pct)


def vs_cell(vs, higher_is_better: bool = True, unit: str = "s") -> Cell:
    """A comparison as a cell: its change and ✓ / ✓ differs / ✗ / ?."""
    it = said.said(vs.ratio, higher_is_better, unit, vs.overhead_pct)
    text = it.cell()
    if vs.verdict == Decided.PASS:
        return Cell(f"{text} ✓", Decided.PASS)
    if vs.verdict == Decided.DIFFERS:
        return Cell(f"{text} {verdicts.DIFFERS_MARK}", Decided.DIFFERS)
    if vs.verdict == Decided.FAIL:
        named = it.times is not None or not vs.direction
        return Cell(f"{text} ✗" + ("" if named else f" {vs.direction}"), Decided.FAIL)
    need = vs.trials_needed
    return Cell(f"{text} ?" + (f" ≥{need} {verdicts.need_unit(vs)}" if need else ""),
                Decided.INCONCLUSIVE)


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


_RANK = {Decided.FAIL: 3, Decided.INCONCLUSIVE: 2, Decided.DIFFERS: 1.5, Decided.PASS: 1}


def per_instance_cell(rows: list[Result]) -> Cell | None:
    """A group's instances against the single baseline, in one cell: the range of their
    ratios and the worst verdict among them."""
    rows = [r for r in rows if r.vs_baseline]
    if not rows:
        return None
    worst = max(rows, key=lambda r: _RANK.get(r.vs_baseline.verdict, 0))
    c = cell(worst, None)
    mark = " ".join(w for w in c.text.split() if w in verdicts.MARKS)
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
          "direction (paired: from the geometric mean of the blocks' ratios), from 1.5× "
          "either way as a factor (\"41.7× slower\"); ✓ equivalent within the threshold; "
          "✓ differs: a real difference, within the threshold; ✗ outside it, worse or better "
          "than the reference; ? the samples cannot decide (≥N: blocks, or trials per side, that would); "
          "\"A vs B\": A against its own reference B (the study's versus); instances: the "
          "aggregate against the baseline at the same N when the run has it, else each "
          "instance against the single baseline (\"per instance\")")
