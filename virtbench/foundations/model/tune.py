"""A tune run's section of the report (JSON `tune`): the screening design, each knob's effect
on each metric decided, the interactions the design resolves, the recommendation and its
confirmation (docs/tune.md)."""
from __future__ import annotations

from pydantic import Field

from ...core.decisions import KnobEffect
from .base import Number, Record
from .decision import VsReference


class TuneConfiguration(Record):
    """One configuration of the design: an environment of the run."""

    name: str = Field("", description="its environment label (c1, c2, ...)")
    levels: dict[str, str] = Field(default_factory=dict, description="knob -> level")
    spec: str = Field("", description="its environment spec")


class TuneDesign(Record):
    """The screening design (foundations/stats/screening/design.py)."""

    kind: str = Field("", description="full factorial, fractional factorial, or "
                                      "Plackett-Burman, folded over")
    resolution: int | None = Field(None, description="its resolution (null: full factorial, "
                                   "nothing aliased)")
    aliases: list[str] = Field(default_factory=list, description="its alias chains of "
                               "effects of at most two knobs (a×b = c×d)")
    configurations: list[TuneConfiguration] = Field(default_factory=list,
                                                    description="its configurations")
    full_factorial: int = Field(0, description="the full factorial's configurations")
    base: str = Field("", description="the base configuration's spec (the reference, in "
                                      "every block)")


class TuneEffect(Record):
    """One knob's (or two knobs' interaction's) effect on one metric, decided."""

    knob: str = Field("", description="the knob, or `a×b` for an interaction")
    levels: list[str] = Field(default_factory=list, description="its two levels, first and "
                              "second (an interaction: empty)")
    benchmark: str = Field("", description="the benchmark case's label")
    metric: str = Field("", description="the metric")
    effect_pct: float | None = Field(None, description="the metric's change from the first "
                                     "level to the second, % (an interaction: the change of "
                                     "its product's sign)")
    low_pct: float | None = Field(None, description="its interval, low (Bonferroni over the "
                                  "metric's terms)")
    high_pct: float | None = Field(None, description="its interval, high")
    decision: KnobEffect = Field(KnobEffect.UNDECIDED, description="matters: beyond ±min effect; "
                                   "no effect: within it (equivalence); undecided")
    better_level: str | None = Field(None, description="the level that moves the metric its "
                                     "better way")
    blocks_needed: int | None = Field(None, description="undecided: the blocks that would "
                                      "decide (80 %), the estimate and spread held")
    blocks: int = Field(0, description="the blocks the estimate rests on")


class TuneRecommendation(Record):
    """The configuration the effects on one metric recommend."""

    benchmark: str = Field("", description="the benchmark case's label")
    metric: str = Field("", description="the metric")
    levels: dict[str, str] = Field(default_factory=dict, description="knob -> level; the "
                                   "knobs left out keep the base's setting")
    confirmed: VsReference | None = Field(None, description="this metric's row of the A/B "
                                          "of the recommended configuration against the "
                                          "base, when it ran")


class TuneStep(Record):
    """One step of a refinement: a level between a knob's ends against the best so far."""

    knob: str = Field("", description="the knob")
    level: str = Field("", description="the level tried")
    environment: str = Field("", description="its configuration's environment label "
                                             "(r1, r2, ...)")
    reference: str = Field("", description="the best so far it ran against (r0: the "
                                           "screening's recommendation)")
    levels: dict[str, str] = Field(default_factory=dict, description="its configuration: "
                                   "knob -> level")
    vs_best: VsReference | None = Field(None, description="its A/B against the best so far "
                                        "on the first metric, in the same blocks")
    moved: bool | None = Field(None, description="true: beyond the band on the better side, "
                               "the new best; null: not run yet")


class TuneReport(Record):
    """`tune` of a tune run's JSON report."""

    min_effect_pct: Number = Field(5, description="the smallest effect that matters, %")
    design: TuneDesign = Field(default_factory=TuneDesign, description="the design")
    knobs: list[TuneEffect] = Field(default_factory=list, description="each knob's main "
                                    "effect on each metric")
    interactions: list[TuneEffect] = Field(default_factory=list, description="two-knob "
                                           "interactions, where the design resolves them")
    recommendations: list[TuneRecommendation] = Field(default_factory=list, description="the "
                                                      "recommended configuration per metric")
    recommended: dict[str, str] = Field(default_factory=dict, description="the recommended "
                                        "changes to the base: knob -> level (the knobs that "
                                        "matter on any metric whose better level the base "
                                        "has not; where metrics disagree, the first's)")
    kept: dict[str, str] = Field(default_factory=dict, description="knobs that matter whose "
                                 "better level the base already has: knob -> level")
    refinement: list[TuneStep] = Field(default_factory=list, description="the refinement's "
                                       "steps (--refine), in the order they ran")
    trade_off: str | None = Field(None, description="where the metrics' recommendations "
                                  "disagree")
    confirmation: str | None = Field(None, description="the recommended configuration's "
                                     "environment label, when it ran")
    confirmed: VsReference | None = Field(None, description="the A/B of the recommended "
                                          "configuration against the base on the first "
                                          "metric that asked a change, decided like every "
                                          "comparison (null: nothing to confirm, or not run "
                                          "yet); each metric's in `recommendations`")
    headline: str = Field("", description="the tune in one sentence")
    note: str | None = Field(None, description="why there is no confirmation, or what is "
                             "still missing")
