"""A published paper's claim, checked on the run (the study's [[claim]] tables; docs/decisions.md,
"Claims"); and the paper's own figures and tables the study declares ([[figure]], [[table]];
docs/studies.md), as the report carries them for `virtbench figures` and the report formats."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...core.decisions import ClaimStatus
from .base import Record

# the fields hold ClaimStatus members (core/decisions.py); the JSON Schema lists their words
Status = Literal[ClaimStatus.HOLDS, ClaimStatus.NOT_HOLDS, ClaimStatus.INCONCLUSIVE,
                 ClaimStatus.NOT_MEASURED]


class ClaimLink(Record):
    """One relation between two environments' values of the claim's metric (an ordering
    `a > b > c` has one per neighbour)."""

    left: str = Field("", description="the environment on the left (its label)")
    right: str = Field("", description="the environment on the right (its label)")
    relation: str = Field("", description="what is claimed of left / right, e.g. `>= 1.5`, "
                          "`> 1`, `within ±10 %`")
    status: Status = Field(ClaimStatus.INCONCLUSIVE, description="holds, does not hold, "
                                "inconclusive (after Holm over the study's claims)")
    analysis: Literal["paired", "unpaired"] | None = Field(
        None, description="paired: the blocks' log ratios; unpaired: trimmed means (values "
        "of 0 or below, or --analysis unpaired)")
    estimate: float | None = Field(None, description="left / right: geometric mean of the "
                                   "blocks' ratios (paired) or ratio of trimmed means")
    ci_low: float | None = Field(None, description="(1 - 2 alpha) interval of left / right, low")
    ci_high: float | None = Field(None, description="(1 - 2 alpha) interval, high")
    p_value: float | None = Field(None, description="raw p of the status reached (one-sided; "
                                  "inconclusive: the smaller of holds / does not hold)")
    p_holm: float | None = Field(None, description="p_value adjusted by Holm over every "
                                 "claim's relations")
    blocks: int = Field(0, description="blocks (or samples, unpaired) used")
    blocks_needed: int | None = Field(None, description="inconclusive: the blocks that would "
                                      "likely decide at the observed ratio and spread")
    message: str = Field("", description="the relation in words")


class ClaimResult(Record):
    """A claim of the study's source: holds, does not hold or inconclusive on this run."""

    text: str = Field("", description="the claim, as the study states it")
    source: str = Field("", description="where the paper makes it")
    benchmark: str = Field("", description="the benchmark case's label")
    metric: str = Field("", description="the metric it is about")
    holds_if: str = Field("", description="its machine-checkable form, as written")
    environments: dict[str, str | None] = Field(
        default_factory=dict, description="its names -> the environment's label in this run "
        "(null: not measured here)")
    status: Status = Field(ClaimStatus.INCONCLUSIVE, description="holds: every relation holds; "
                                "does not hold: one does not; inconclusive: otherwise; not "
                                "measured: an environment or the metric is not in this run")
    links: list[ClaimLink] = Field(default_factory=list, description="each relation checked")
    message: str = Field("", description="the status in words, with what would decide")
    note: str | None = Field(None, description="the study's note on the claim")


class DeclaredView(Record):
    """A figure or a table the run's study declares."""

    what: Literal["figure", "table"] = Field("figure", description="a figure or a table")
    name: str = Field("", description="its name (the file name of a figure)")
    kind: str = Field("", description="figure: bars (ratios), values, spread (per instance); "
                                      "table: verdicts (the paper's ○/×), values, exits")
    benchmarks: list[str] = Field(default_factory=list, description="the benchmark labels "
                                  "it shows, in order")
    metrics: list[str] = Field(default_factory=list, description="the metrics it shows "
                               "(empty: every metric)")
    title: str | None = Field(None, description="its title (the paper's caption)")
    published: bool = Field(True, description="the published figures beside the measured")
    source: str | None = Field(None, description="where in the paper")
    hot: dict[str, int] = Field(default_factory=dict, description="an exits table: the "
                                "paper's exit counts by guest function")
