"""The price list of virtualization (issue 24): one row per primitive operation the
`primitives` benchmark measured, one cell per environment with its figure and its ratio to
the baseline, the exits each primitive causes where an exit profile of that environment
exists, and one sentence per family of rows."""
from __future__ import annotations

from pydantic import Field

from .base import Record


class PriceExit(Record):
    """Exits of one reason, in the environment's exit profile of the benchmark, that the
    primitive causes (the profile covers the whole profiled trial: every primitive of the
    benchmark that causes this reason shares the count)."""

    reason: str = Field("", description="the exit reason as the profile names it")
    count: int = Field(0, description="how many the profiled trial counted")
    share_pct: float = Field(0.0, description="share of the profile's exits, %")


class PriceCell(Record):
    """One primitive in one environment."""

    environment: str = Field("", description="the environment's label")
    value: float | None = Field(None, description="the trimmed mean, in the row's unit "
                                "(null: not measured there)")
    ratio: float | None = Field(None, description="against the baseline (its reference's "
                                "ratio); null for the baseline itself or with no figure")
    verdict: str | None = Field(None, description="the verdict against the baseline")
    missing: str | None = Field(None, description="why there is no figure, when the "
                                "benchmark said (a cross-CPU figure on one CPU, huge pages "
                                "that cannot be checked, the I/O port outside a guest)")
    profiled: bool = Field(False, description="an exit profile of this environment x "
                           "benchmark exists (then `exits` lists the linked reasons in it)")
    exits: list[PriceExit] = Field(default_factory=list, description="the profile's exits "
                                   "of the reasons this primitive causes")


class PriceRow(Record):
    """One primitive operation across the environments."""

    family: str = Field("", description="its family: syscall, pagefault, ctxsw, timer, "
                        "memlat, ioport")
    metric: str = Field("", description="the metric's name")
    unit: str = Field("", description="its unit (ns; the timer's us)")
    description: str = Field("", description="what one operation is")
    exit_reasons: list[str] = Field(default_factory=list, description="the exit reasons it "
                                    "causes under hardware virtualization or TCG (empty: none "
                                    "expected)")
    cells: list[PriceCell] = Field(default_factory=list, description="one per environment, "
                                   "in the list's order")


class FamilySentence(Record):
    """What a family of rows says across the environments, in one sentence."""

    family: str = Field("", description="the family")
    sentence: str = Field("", description="which primitives are an order of magnitude or "
                          "more above the baseline, in which environment, and which are not")


class PriceList(Record):
    """The price list of one `primitives` case of the run."""

    benchmark: str = Field("", description="the benchmark case's label")
    baseline: str | None = Field(None, description="the environment the ratios are to")
    environments: list[str] = Field(default_factory=list, description="its columns, the "
                                    "baseline first")
    rows: list[PriceRow] = Field(default_factory=list, description="one per primitive, by "
                                 "family")
    sentences: list[FamilySentence] = Field(default_factory=list, description="one per "
                                            "family")
    notes: list[str] = Field(default_factory=list, description="how to read it")
