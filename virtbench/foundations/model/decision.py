"""A result against its reference: the decision (docs/decisions.md) with its estimate,
intervals, raw and family-adjusted p, the blocks it used and the run's noise floor; the published
study's own rule beside it; the order effect inside blocks; the trials left out as
disturbed."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...core import defaults
from ...core.decisions import Decided, Direction
from .base import Number, Record

# the fields hold the enums' members (core/decisions.py); the JSON Schema lists their words
DecidedWord = Literal[Decided.PASS, Decided.DIFFERS, Decided.FAIL, Decided.INCONCLUSIVE]
PassOrFail = Literal[Decided.PASS, Decided.FAIL]
Side = Literal[Direction.WORSE, Direction.BETTER]
Analysis = Literal["paired", "sequential", "unpaired"]


class PublishedRule(Record):
    """The published studies' own rule, shown in its own column: the ratio of trimmed means
    (drop the highest and the lowest sample, mean of the rest), within ±threshold or not,
    without any statistics."""

    ratio: float | None = Field(None, description="trimmed mean / the reference's trimmed "
                                "mean (null when the reference's is 0)")
    overhead_pct: float | None = Field(None, description="its overhead, %: positive = worse")
    verdict: PassOrFail | None = Field(
        None, description="pass: |overhead| < threshold; fail: not (the published studies' ✓ / ✗)")


class OrderEffect(Record):
    """First vs later inside a block (stats.paired.position_effect): how much a value
    differs when it runs first in its block, from the blocks' own order (trials.seq)."""

    first_pct: float | None = Field(None, description="how much higher a value is when it "
                                    "runs before the other of the pair, %; null when not "
                                    "estimable")
    ci_low_pct: float | None = Field(None, description="95 % CI of first_pct, low (Welch)")
    ci_high_pct: float | None = Field(None, description="95 % CI of first_pct, high")
    p_value: float | None = Field(None, description="Welch's t test of 'no order effect'")
    p_holm: float | None = Field(None, description="p_value after Holm over the run's rows "
                                 "with an order effect estimate")
    significant: bool = Field(False, description="p_holm < alpha: the report shows it")
    env_first: int = Field(0, description="blocks where the environment ran first")
    ref_first: int = Field(0, description="blocks where the reference ran first")
    balanced_ratio: float | None = Field(None, description="the geometric-mean ratio with "
                                         "the order effect removed")
    message: str = Field("", description="the effect in words")


class DisturbedTrial(Record):
    """A trial the runner marked disturbed (trials.detail.disturbed): kept in the store,
    left out of the statistics with its reason."""

    trial: int = Field(0, description="the trial's number (from 1)")
    value: float | None = Field(None, description="what it measured for this metric")
    reason: str = Field("", description="why it is disturbed (host steal time, run queue, "
                                        "CPU share over the trial)")


class VsReference(Record):
    """A result against its reference (`vs_baseline`, `vs_others`): the decision of the
    analysis the report used (`analysis`; docs/decisions.md), with the published rule beside it."""

    ratio: float = Field(0.0, description="the estimate, environment / reference on the "
                         "metric's own scale: the geometric mean of the blocks' ratios "
                         "(paired, sequential) or the ratio of trimmed means (unpaired)")
    overhead_pct: float = Field(0.0, description="how much worse than the reference, %: "
                                "positive = worse, whatever the metric's direction")
    ci_low: float | None = Field(None, description="(1 - alpha) interval of overhead_pct, low")
    ci_high: float | None = Field(None, description="(1 - alpha) interval of overhead_pct, "
                                  "high")
    ratio_ci_low: float | None = Field(None, description="(1 - alpha) interval of ratio, low: "
                                       "t interval of the blocks' log ratios (paired), "
                                       "confidence sequence (sequential), percentile "
                                       "bootstrap (unpaired)")
    ratio_ci_high: float | None = Field(None, description="(1 - alpha) interval of ratio, high")
    p_value: float | None = Field(None, description="raw p of 'no difference' (p_method)")
    verdict: DecidedWord = Field(
        Decided.INCONCLUSIVE, description="the decision: pass (the (1 - 2 alpha) interval lies "
        "inside ±threshold and no difference is detected), differs, within threshold "
        "(significant, and inside), fail (the (1 - alpha) interval lies beyond ±threshold: see "
        "direction), inconclusive (see trials_needed); after the run's correction")
    direction: Side | None = Field(
        None, description="which way a fail (or a difference) lies")
    power: float | None = Field(None, description="the test's power to see a change of the "
                                                  "threshold")
    trials_needed: int | None = Field(None, description="inconclusive: the blocks (trials per "
                                      "side) that would likely decide, at the observed ratio "
                                      "and spread")
    message: str = Field("", description="the verdict in words")
    alpha: Number = Field(defaults.ALPHA, description="the significance level used")
    threshold_pct: Number = Field(defaults.THRESHOLD_PCT, description="the threshold used, %")
    reference: str | None = Field(None, description="the reference environment's label")
    reference_metric: str | None = Field(None, description="the reference's metric (an "
                                         "instance's row: the single baseline's metric)")
    basis: Literal["single", "per-instance", "same-instances", "host", "versus", "baseline",
                   "none"] = \
        Field("single", description="why this reference: single (the baseline), per-instance "
              "(one instance against the single baseline), same-instances (the baseline kind "
              "at the same N), host (a fleet: the first host's same environment), versus (the "
              "environment's own reference in the study)")
    analysis: Analysis | None = Field(None, description="paired: the blocks' log ratios "
                                      "(default); sequential: the same, read with confidence "
                                      "sequences (adaptive trials); unpaired: trimmed means "
                                      "(--analysis unpaired, other runs' hosts, and values of "
                                      "0 or below, which have no logarithm)")
    estimator: str | None = Field(None, description="what ratio estimates")
    p_method: str | None = Field(None, description="the test behind p_value")
    p_holm: float | None = Field(None, description="p_value adjusted by Holm over the run's "
                                 "rows (family-wise)")
    p_bh: float | None = Field(None, description="p_value adjusted by Benjamini-Hochberg over "
                               "the run's rows (false discovery rate)")
    p_band: float | None = Field(None, description="raw p of the band claim: inside "
                                 "±threshold (TOST) when the estimate is inside, beyond the "
                                 "nearer edge when not")
    p_band_holm: float | None = Field(None, description="p_band adjusted by Holm over the "
                                      "run's rows")
    p_band_bh: float | None = Field(None, description="p_band adjusted by Benjamini-Hochberg")
    verdict_claim: Literal["band", "difference"] | None = Field(
        None, description="the claim the verdict makes: band (pass: inside ±threshold, fail: "
        "beyond it) or difference (differs); inconclusive: the claim it could not make")
    verdict_p: float | None = Field(None, description="the p of that claim, raw (p_band or "
                                    "p_value): the p shown beside the verdict")
    verdict_p_adjusted: float | None = Field(None, description="verdict_p adjusted over the "
                                             "run's claims by the run's correction; a pass, "
                                             "fail or differs has it below alpha")
    eq_ci_low: float | None = Field(None, description="(1 - 2 alpha) interval of ratio, low "
                                    "(the equivalence test's)")
    eq_ci_high: float | None = Field(None, description="(1 - 2 alpha) interval of ratio, high")
    blocks: int = Field(0, description="blocks used: those where both sides have an "
                        "undisturbed value (unpaired: the environment's samples)")
    sd_log: float | None = Field(None, description="standard deviation of the blocks' log "
                                 "ratios: the run's own block-to-block noise")
    mdc_pct: float | None = Field(None, description="minimal detectable change: the smallest "
                                  "change in % of the ratio these blocks detect with 80 % "
                                  "power at alpha (no difference means: none this large)")
    disturbed_excluded: int = Field(0, description="blocks left out because the "
                                    "environment's or the reference's trial in it was marked "
                                    "disturbed (each row's `disturbed` says why)")
    published_rule: PublishedRule | None = Field(None, description="the published study's rule on trimmed "
                                       "means, for its own column")
    order: OrderEffect | None = Field(None, description="first vs later in a block (paired "
                                      "rows)")
    differs_in: list[str] = Field(default_factory=list, description="the facts of the "
                                  "environment's and the reference's fingerprints that differ, "
                                  "by plain name (the report's `differences` has both values; "
                                  "empty: none differs, or the kinds differ: see there)")
