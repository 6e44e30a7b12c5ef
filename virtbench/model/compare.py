"""`virtbench compare`: two runs side by side, the change per metric with its verdict."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .base import Record
from .run import RunInfo


class CompareRow(Record):
    """One environment x benchmark x metric of both runs: the change from A to B."""

    environment: str = Field("", description="A's label, or `A → B` when paired across labels")
    benchmark: str = ""
    metric: str = ""
    unit: str = ""
    higher_is_better: bool = True
    a: float = Field(0.0, description="A's trimmed mean")
    b: float = Field(0.0, description="B's trimmed mean")
    n_a: int = 0
    n_b: int = 0
    ratio: float | None = Field(None, description="B / A")
    change_pct: float | None = Field(None, description="positive = B worse than A; null when "
                                                       "A's trimmed mean is 0")
    ci_low: float | None = Field(None, description="95 % CI of change_pct")
    ci_high: float | None = None
    p_value: float | None = None
    verdict: Literal["worse", "better", "same", "inconclusive"] = Field(
        "inconclusive", description="worse/better: p < alpha and |change| > min_change_pct; "
        "same: the test could have seen that change and did not; inconclusive: too few trials")
    power: float | None = None
    trials_needed: int | None = Field(None, description="trials per side that would decide")
    message: str = ""


class MetadataDifference(Record):
    """A fact that differs between the runs or two paired environments."""

    environment: str | None = Field(None, description="null: the runs themselves")
    key: str = ""
    a: Any = None
    b: Any = None


class Comparison(Record):
    """`virtbench compare --format json`."""

    a: RunInfo = Field(default_factory=RunInfo)
    b: RunInfo = Field(default_factory=RunInfo)
    alpha: float = 0.01
    min_change_pct: float = 5.0
    pairs: dict[str, str] = Field(default_factory=dict, description="A's label -> B's")
    rows: list[CompareRow] = Field(default_factory=list)
    only_in_a: list[list[str]] = Field(default_factory=list,
                                       description="[environment, benchmark, metric] in A only")
    only_in_b: list[list[str]] = Field(default_factory=list)
    metadata_differences: list[MetadataDifference] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
