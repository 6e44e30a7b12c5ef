"""The headline of a run's report: each environment against its reference as a factor, and
a summary over its benchmarks (made by virtbench/results/analysis/headline.py)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Record


class HeadlineItem(Record):
    """One row against its reference, as a factor (virtbench/results/analysis/headline.py)."""

    benchmark: str = Field("", description="the benchmark case's label")
    metric: str = Field("", description="the metric")
    unit: str = Field("", description="its unit")
    ratio: float = Field(0.0, description="env / reference on the metric's scale (vs_baseline)")
    factor: float = Field(1.0, description="how many times slower (or faster), >= 1")
    direction: Literal["slower", "faster", "worse", "better"] = Field(
        "slower", description="slower / faster for time and rate metrics, worse / better "
        "for others")
    factor_low: float | None = Field(None, description="the factor's (1 - alpha) interval, low")
    factor_high: float | None = Field(None, description="the factor's (1 - alpha) interval, "
                                      "high")
    verdict: str = Field("", description="the row's verdict")
    words: str = Field("", description="the row in words: '41.7× slower [38.1, 45.0]', "
                       "'within ±10 %: equivalent'")


class HeadlineSummary(Record):
    """An environment over its benchmarks: the geometric mean of its rows' factors."""

    factor: float = Field(1.0, description="the geometric mean of the slowdowns (per "
                          "benchmark first), as a factor >= 1")
    direction: Literal["slower", "faster", "worse", "better"] = Field(
        "slower", description="which way")
    benchmarks: int = Field(0, description="benchmarks it covers")
    rows: int = Field(0, description="rows (metrics) it covers")
    left_out: int = Field(0, description="rows with no ratio, left out")
    words: str = Field("", description="the summary in words")


class Headline(Record):
    """An environment against its reference, first thing in every report."""

    environment: str = Field("", description="the environment's label")
    reference: str | None = Field(None, description="its reference(s)")
    summary: HeadlineSummary | None = Field(None, description="over its benchmarks")
    items: list[HeadlineItem] = Field(default_factory=list, description="each row")
