"""A tune run's section of the report (foundations/model/tune.py) from its analysed rows: the
design, each knob's effect on each metric decided (foundations/stats/screening/effects.py),
the interactions the design resolves, the recommendation per metric and the A/B of the
recommended configuration against the base (its row's comparison, decided like every
comparison of the run). docs/tune.md."""
from __future__ import annotations

from ...foundations.model import Result, RunReport
from ...foundations.model.decision import VsReference
from ...foundations.model.tune import (TuneConfiguration, TuneDesign, TuneEffect,
                                       TuneRecommendation, TuneReport)
from ...foundations.stats.screening import effects as fx
from ...study.design import Study
from ...study.tune import BASE_NAME, RECOMMENDED_NAME, TuneEntry, screening_alpha
from ..report.words import tune as words
from . import refine


def tune_section(report: RunReport, study: Study, detail: dict | None = None
                 ) -> TuneReport | None:
    """The tune of `report`'s run (None for a run that is not a tune); `detail`: the run's
    detail (its refinement's record, `tune_refine`)."""
    entry = study.tune
    if entry is None:
        return None
    design = entry.design()
    configurations = entry.configurations()
    section = TuneReport(
        min_effect_pct=entry.min_effect_pct,
        design=TuneDesign(kind=design.kind, resolution=design.resolution,
                          aliases=list(design.aliases), full_factorial=design.full_size,
                          base=entry.spec({}, BASE_NAME),
                          configurations=[TuneConfiguration(name=n, levels=lv,
                                                            spec=entry.spec(lv, n))
                                          for n, lv in configurations]))
    row_of = {name: i for i, (name, _) in enumerate(configurations)}
    label = RECOMMENDED_NAME
    firsts: list[tuple[Result, dict[str, str]]] = []
    for case in study.benchmarks:
        for metric in entry.metrics_of(case.name):
            rows = [r for r in report.results if r.benchmark == case.label
                    and r.metric_id.base == metric and r.metric_id.scope == "single"]
            if not rows:
                continue
            levels = _metric(section, entry, design, rows, row_of, screening_alpha(study))
            firsts.append((rows[0], levels))
            confirm = [VsReference.of(r.vs_baseline) for r in rows
                       if r.environment == label and r.vs_baseline is not None]
            section.recommendations.append(TuneRecommendation(
                benchmark=case.label, metric=metric, levels=levels,
                confirmed=confirm[0] if confirm else None))
            if confirm:
                section.confirmation = label
    refined = (detail or {}).get("tune_refine") or {}
    section.refinement = refine.steps(report, study, refined)
    _recommend(section, firsts, refined.get("best") if refined.get("stopped") else None)
    return section


def _metric(section: TuneReport, entry: TuneEntry, design, rows: list[Result],
            row_of: dict[str, int], alpha: float) -> dict[str, str]:
    """Decide one metric's effects into `section`; its recommendation (knob -> level)."""
    first = rows[0]
    observations = [fx.Observation(row_of[r.environment], trial - 1, value)
                    for r in rows if r.environment in row_of
                    for value, trial in zip(r.samples, r.trials)]
    effects = fx.fit(list(design.rows), design.knobs, observations, design.interactions,
                     fx.EffectQuestion(first.higher_is_better, alpha, entry.min_effect_pct))
    knobs = {k.name: k for k in entry.knobs}
    for e in effects:
        single = len(e.term.knobs) == 1
        levels = list(knobs[e.term.name].ends) if single else []
        better = (levels[0 if e.better < 0 else 1] if single and e.better is not None
                  else None)
        record = TuneEffect(knob=e.term.name, levels=levels, benchmark=first.benchmark,
                            metric=first.metric_id.base, effect_pct=e.effect_pct,
                            low_pct=e.low_pct, high_pct=e.high_pct, decision=e.decision,
                            better_level=better, blocks_needed=e.blocks_needed,
                            blocks=e.blocks)
        (section.knobs if single else section.interactions).append(record)
    coded = fx.recommend(effects, design.knobs, first.higher_is_better)
    return {k: knobs[k].ends[0 if code < 0 else 1] for k, code in coded.items()}


def _recommend(section: TuneReport, firsts: list[tuple[Result, dict[str, str]]],
               refined: dict[str, str] | None) -> None:
    """The recommendation (the first metric's, or the refinement's best), the trade-off
    when the metrics disagree, and the headline."""
    if not firsts:
        section.note = "no metric of this tune has samples yet"
        section.headline = "nothing measured yet"
        return
    row, levels = firsts[0]
    if refined is not None:
        levels = refined
    section.recommended = levels
    others = [(r, lv) for r, lv in firsts[1:] if _conflicts(lv, levels)]
    if others:
        section.trade_off = "; ".join(
            f"{r.metric_id.base} of {r.benchmark} recommends "
            f"{_shown(lv) or 'the base'}" for r, lv in [(row, levels), *others])
    vs = section.recommendations[0].confirmed
    section.confirmed = vs
    if levels and vs is None:
        section.note = ("the recommended configuration has not run against the base yet "
                        "(an interrupted tune: `virtbench run --resume` runs it)")
    said_confirmation = words.confirmation_words(vs, row.benchmark, row.unit,
                                                 row.higher_is_better)
    rest = [words.knob_words(e, section.min_effect_pct, row.unit, row.higher_is_better)
            for e in section.knobs
            if e.benchmark == row.benchmark and e.metric == row.metric_id.base
            and e.knob not in levels]
    section.headline = words.headline(levels, said_confirmation, rest,
                                      f"{row.metric_id.base} of {row.benchmark}")


def _conflicts(other: dict[str, str], levels: dict[str, str]) -> bool:
    """Whether another metric's recommendation asks a change the first's does not make (a
    knob at another level, or set where the first keeps the base's); one that changes
    nothing asks nothing."""
    return any(levels.get(k) != v for k, v in other.items())


def _shown(levels: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in levels.items())
