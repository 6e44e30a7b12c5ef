"""A study's own figures and tables ([[figure]], [[table]]: its paper's), as the report
carries them for `virtbench figures` and the report formats to draw (docs/studies.md)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Record


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
