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
    _recommend(section, entry, firsts, refined.get("best") if refined.get("stopped") else None)
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


def _recommend(section: TuneReport, entry: TuneEntry,
               firsts: list[tuple[Result, dict[str, str]]], refined: dict[str, str] | None
               ) -> None:
    """The recommendation (every metric's knobs that matter together, or the refinement's
    best), the trade-off where metrics want a knob at different levels, and the headline
    (said on the first metric that asks a change)."""
    if not firsts:
        section.note = "no metric of this tune has samples yet"
        section.headline = "nothing measured yet"
        return
    levels, section.trade_off = combined(firsts)
    if refined is not None:
        levels = refined
    section.recommended = entry.changes(levels)
    section.kept = {k: v for k, v in levels.items() if k not in section.recommended}
    levels = section.recommended
    lead = next((i for i, (_, lv) in enumerate(firsts) if lv), 0)
    row = firsts[lead][0]
    vs = section.recommendations[lead].confirmed if levels else None
    section.confirmed = vs
    if levels and vs is None:
        section.note = ("the recommended configuration has not run against the base yet "
                        "(an interrupted tune: `virtbench run --resume` runs it)")
    said_confirmation = words.confirmation_words(vs, row.benchmark, row.unit,
                                                 row.higher_is_better)
    rest = [words.knob_words(e, section.min_effect_pct, row.unit, row.higher_is_better)
            for e in section.knobs
            if e.benchmark == row.benchmark and e.metric == row.metric_id.base
            and e.knob not in levels and e.knob not in section.kept]
    section.headline = words.headline(levels, said_confirmation, rest,
                                      f"{row.metric_id.base} of {row.benchmark}", section.kept)


def combined(firsts: list[tuple[Result, dict[str, str]]]) -> tuple[dict[str, str], str | None]:
    """The metrics' recommendations together (pure): each knob some metric sets, at the
    level the first such metric asks; where metrics ask different levels of a knob, the
    trade-off in words (`cpus: 2 for seconds of pi, 0.5 for copy_mb_s of stream`)."""
    wanted: dict[str, list[tuple[str, str]]] = {}
    for row, lv in firsts:
        for knob, level in lv.items():
            wanted.setdefault(knob, []).append((level, f"{row.metric_id.base} of {row.benchmark}"))
    levels = {knob: asks[0][0] for knob, asks in wanted.items()}
    split = [f"{knob}: " + ", ".join(f"{level} for {who}" for level, who in asks)
             for knob, asks in wanted.items() if len({level for level, _ in asks}) > 1]
    return levels, ("; ".join(split) + " (the first is taken)") if split else None


def _shown(levels: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in levels.items())
