"""What differs between an environment and its reference, or between one environment in two
runs: the facts of their fingerprints, each with its two values (made by
virtbench/results/analysis/facts/differences.py; the rule is in its docstring)."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .base import Record


class Fact(Record):
    """One fact of two environments' fingerprints, with its value on each side."""

    key: str = Field("", description="the fact's identity (`qemu_version`, `option:disk`, "
                     "`tuning:clocksource`): stable, for scripts")
    name: str = Field("", description="its plain name (`QEMU`, `guest Linux`, `option disk`)")
    layer: Literal["host", "environment"] = Field(
        "environment", description="host: a fact of the machine under both sides (host "
        "kernel, host CPU, microcode, virtbench's kernels); environment: of the environment "
        "itself (QEMU, firmware, guest Linux, options, knobs and tunings read back)")
    a: Any = Field(None, description="its value on the first side (the reference; run A)")
    b: Any = Field(None, description="its value on the second side (the environment; run B)")
    option: str | None = Field(None, description="the environment option that sets it, when "
                               "one does (`binary` for QEMU's version): facts of one option "
                               "are one change")
    words: str = Field("", description="the fact in words: 'QEMU 7.2.22 → 10.0.2'")


class PairDifferences(Record):
    """What differs between two environments: an environment and its reference in one run,
    or one environment in two runs (`compare`)."""

    environment: str = Field("", description="the environment's label (`compare`: A's label, "
                             "or `A → B`)")
    reference: str = Field("", description="what it is compared with: its reference's label "
                           "(`compare`: the same environment in run A)")
    kinds: str | None = Field(None, description="when the two are of different kinds: the "
                              "difference in words ('a QEMU guest (TCG) vs bare metal'), and "
                              "the facts only one kind has are not listed")
    facts: list[Fact] = Field(default_factory=list, description="the facts that differ, host "
                              "facts first")
    unrecorded: list[str] = Field(default_factory=list, description="facts recorded on one "
                                  "side only (a run stored before virtbench recorded them): "
                                  "not counted as differences")
    changes: int = Field(0, description="how many separate changes the facts make: facts set "
                         "by one option count once")
    separable: list[str] = Field(default_factory=list, description="the options that differ: "
                                 "a study with one environment per option separates them "
                                 "(`virtbench report RUN --separate`)")
    line: str = Field("", description="the one line every text format prints: 'q10 vs qemu: "
                      "QEMU 7.2.22 → 10.0.2; everything else equal'")
