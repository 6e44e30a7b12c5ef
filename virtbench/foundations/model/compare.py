"""`virtbench compare`: two runs side by side, the change per metric with its verdict."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ...core.decisions import CompareVerdict
from .base import Record
from .differences import PairDifferences
from .run import RunInfo


class CompareRow(Record):
    """One environment x benchmark x metric of both runs: the change from A to B."""

    environment: str = Field("", description="A's label, or `A → B` when paired across labels")
    benchmark: str = Field("", description="the benchmark case's label")
    metric: str = Field("", description="the metric's name")
    unit: str = Field("", description="its unit")
    higher_is_better: bool = Field(True, description="its direction")
    a: float = Field(0.0, description="A's trimmed mean")
    b: float = Field(0.0, description="B's trimmed mean")
    n_a: int = Field(0, description="A's samples")
    n_b: int = Field(0, description="B's samples")
    ratio: float | None = Field(None, description="B / A")
    change_pct: float | None = Field(None, description="positive = B worse than A; null when "
                                                       "A's trimmed mean is 0")
    ci_low: float | None = Field(None, description="95 % CI of change_pct")
    ci_high: float | None = Field(None, description="95 % CI of change_pct, high")
    p_value: float | None = Field(None, description="two-sided permutation test of the "
                                                    "trimmed means")
    verdict: Literal[CompareVerdict.WORSE, CompareVerdict.BETTER, CompareVerdict.SAME,
                     CompareVerdict.INCONCLUSIVE] = Field(
        CompareVerdict.INCONCLUSIVE,
        description="worse/better: p < alpha and |change| > min_change_pct; same: the test could have seen that change and did not; inconclusive: too few trials")
    power: float | None = Field(None, description="the test's power to see min_change_pct")
    trials_needed: int | None = Field(None, description="trials per side that would decide")
    message: str = Field("", description="the verdict in words")


class MetadataDifference(Record):
    """A fact that differs between the runs or two paired environments."""

    environment: str | None = Field(None, description="null: the runs themselves")
    key: str = Field("", description="what differs: quick, hostname, params of a benchmark, "
                                     "or a fact's plain name (`differences` has it whole)")
    a: Any = Field(None, description="its value in A")
    b: Any = Field(None, description="its value in B")


class Comparison(Record):
    """`virtbench compare --format json`."""

    a: RunInfo = Field(default_factory=RunInfo, description="run A")
    b: RunInfo = Field(default_factory=RunInfo, description="run B")
    alpha: float = Field(0.01, description="a change counts when p < alpha")
    min_change_pct: float = Field(5.0, description="... and |change| > min_change_pct")
    pairs: dict[str, str] = Field(default_factory=dict, description="A's label -> B's")
    rows: list[CompareRow] = Field(default_factory=list, description="the metrics both "
                                   "runs have, paired")
    only_in_a: list[list[str]] = Field(default_factory=list,
                                       description="[environment, benchmark, metric] in A only")
    only_in_b: list[list[str]] = Field(default_factory=list,
                                       description="[environment, benchmark, metric] in B only")
    metadata_differences: list[MetadataDifference] = Field(
        default_factory=list, description="what differs between the runs and paired "
        "environments (a change may come from these)")
    differences: list[PairDifferences] = Field(
        default_factory=list, description="per paired environment, the facts of its "
        "fingerprint that differ from run A to run B (A's value first)")
    warnings: list[str] = Field(default_factory=list, description="what to check before "
                                "reading a change")
