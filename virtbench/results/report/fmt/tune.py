"""A tune run's section as lines (the text and Markdown reports, `virtbench tune`'s end and
its --dry-run): the headline, the design, each knob's decision per metric, the interactions
the design resolves, the trade-off between metrics. Pure."""
from __future__ import annotations

from ....foundations.model import RunReport
from ....foundations.model.tune import TuneDesign, TuneEffect, TuneReport
from ..words import tune as words

TITLE = "tune"


def lines(report: RunReport) -> list[str]:
    """The tune section of a run's report; [] for a run that is not a tune."""
    tune = report.tune
    if tune is None:
        return []
    out = [tune.headline, *design_summary(tune.design)]
    units = {(r.benchmark, r.metric_id.base): (r.unit, r.higher_is_better)
             for r in report.results}
    for effect in [*tune.knobs, *tune.interactions]:
        unit, higher = units.get((effect.benchmark, effect.metric), ("", True))
        out.append(f"{effect.benchmark} · {effect.metric}: "
                   f"{words.knob_words(effect, tune.min_effect_pct, unit, higher)}"
                   + _interval(effect))
    for step in tune.refinement:
        first = next(((r.unit, r.higher_is_better) for r in report.results
                      if r.environment == step.environment), ("", True))
        out.append("refine: " + words.step_words(step, *first))
    if tune.trade_off:
        out.append(f"trade-off: {tune.trade_off}")
    if tune.note:
        out.append(f"note: {tune.note}")
    return out


def _interval(effect: TuneEffect) -> str:
    """The effect from the first level to the second, in figures, when it was estimated."""
    if effect.effect_pct is None:
        return ""
    return (f" (first to second level: {effect.effect_pct:+.1f} % "
            f"[{effect.low_pct:+.1f}, {effect.high_pct:+.1f}], {effect.blocks} blocks)")


def design_summary(design: TuneDesign) -> list[str]:
    """The design in two lines: its kind, size against the full factorial, aliasing."""
    resolution = f", resolution {_roman(design.resolution)}" if design.resolution else ""
    out = [f"design: {design.kind}{resolution}, {len(design.configurations)} of "
           f"{design.full_factorial} configurations; base {design.base} in every block"]
    if design.aliases:
        out.append("aliased: " + "; ".join(design.aliases))
    return out


def design_lines(tune: TuneReport, blocks: int, confirm_blocks: int, cases: int,
                 estimate_s: float, looks: list[int] | None = None) -> list[str]:
    """--dry-run: the design, its configurations, its blocks and the expected time;
    `looks`: an adaptive screening's looks (its first is `blocks`)."""
    design = tune.design
    out = design_summary(design)
    for c in design.configurations:
        out.append(f"  {c.name}: " + ", ".join(f"{k}={v}" for k, v in c.levels.items()))
    envs = len(design.configurations) + 1
    out.append(f"screening: {blocks} block(s) x {envs} environment(s) x {cases} benchmark(s) "
               f"= {blocks * envs * cases} trials, then the A/B of the recommendation "
               f"against the base: {confirm_blocks} block(s) x 2 x {cases} = "
               f"{confirm_blocks * 2 * cases} trials")
    if looks:
        out.append(f"trials auto: the effects are looked at after {', '.join(map(str, looks))} "
                   f"block(s), each look at alpha / {len(looks)}, until every knob is "
                   "decided (the time above is the first look's)")
    out.append(f"decisions: matters beyond ±{tune.min_effect_pct:g} %, no effect within it "
               "(intervals Bonferroni-corrected over each metric's effects)")
    out.append(f"expected time: about {estimate_s / 60:.0f} min (a rough figure)")
    return out


def _roman(n: int) -> str:
    return {3: "III", 4: "IV", 5: "V"}.get(n, str(n))
