"""Results over time (`virtbench history --format json`): runs lined up into series, one
point per run, and the changes found in each (virtbench/foundations/stats/changes.py says how)."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, PrivateAttr

from ...core import defaults
from .base import Number, Record
from .decision import Side

HISTORY_SCHEMA_VERSION = "1.0"

Status = Literal["confirmed", "suspected", "no change", "undecided"]


class HistoryFact(Record):
    """A fingerprint fact that differs between a run and the one before it in the series."""

    key: str = Field("", description="the fact's identity, as the report's `differences` "
                     "name it (qemu_version, guest_kernel, host_kernel, firmware, option:cpus, "
                     "tuning:NAME...)")
    name: str = Field("", description="its plain name (QEMU, guest Linux, option cpus)")
    words: str = Field("", description="the change in words: 'QEMU 7.2.22 → 10.0.2'")
    option: str | None = Field(None, description="the environment option that sets it, when "
                               "one does: facts of one option are one change")
    where: Literal["environment", "reference"] = Field(
        "environment", description="whose fact: the series' environment or (a ratio "
        "series) its reference")
    before: Any = Field(None, description="its value in the run before")
    after: Any = Field(None, description="its value in this run")


class HistoryPoint(Record):
    """One run of a series."""

    run: str = Field("", description="the run's id")
    started: str | None = Field(None, description="when the run started (ISO 8601, UTC)")
    series: str | None = Field(None, description="the named series the run is tagged into")
    value: float | None = Field(None, description="the run's estimate: the trimmed mean "
                                "(value series) or the paired ratio to the reference "
                                "(ratio series)")
    ci_low: float | None = Field(None, description="the run's (1 - alpha) interval of it, low")
    ci_high: float | None = Field(None, description="the run's interval, high")
    n: int = Field(0, description="the run's samples (successful trials) behind it")
    samples: list[float] = Field(default_factory=list, description="the run's raw samples "
                                 "of the metric (the environment's, for a ratio series)")
    verdict: str | None = Field(None, description="a ratio series: the run's own verdict "
                                "against its reference")


class HistoryChange(Record):
    """A point where the series' level may have moved: `run` is the first run after it."""

    run: str = Field("", description="the first run after the point")
    index: int = Field(0, description="its position in the series (from 0)")
    kind: Literal["fact", "drift"] = Field(
        "fact", description="fact: a fingerprint fact changed here (before/after test); "
        "drift: no fact changed, found by the change-point search")
    status: Status = Field("undecided", description="confirmed (at least 2 runs after it "
                           "moved), suspected (one run after: needs one more run), no change "
                           "(equivalent within ±threshold), undecided")
    runs_before: int = Field(0, description="the runs before it that the test used")
    runs_after: int = Field(0, description="the runs after it that the test used")
    ratio: float | None = Field(None, description="after / before: the ratio of the runs' "
                                "geometric means")
    change_pct: float | None = Field(None, description="how much worse after, %: positive "
                                     "= worse, whatever the metric's direction")
    ci_low: float | None = Field(None, description="(1 - alpha) interval of ratio, low")
    ci_high: float | None = Field(None, description="(1 - alpha) interval of ratio, high")
    p_value: float | None = Field(None, description="raw p of 'no change' (fact points; "
                                  "null at drift points, whose place the search chose)")
    p_adjusted: float | None = Field(None, description="p_value after the family's "
                                     "correction over every fact point tested")
    decision: str | None = Field(None, description="the decision rule's word for after / "
                                 "before: pass, differs, within threshold, fail, "
                                 "inconclusive (before the correction)")
    size: str = Field("", description="how large against ±threshold")
    direction: Side | None = Field(None, description="which way it "
                                                         "moved")
    regression: bool = Field(False, description="a confirmed change for the worse")
    facts: list[HistoryFact] = Field(default_factory=list, description="the fingerprint "
                                     "facts that changed at this point")
    separate: list[str] = Field(default_factory=list, description="when several changes "
                                "were made at once: the options that made them, each to be "
                                "measured in an environment of its own to tell which one "
                                "moved it (`study`)")
    study: str | None = Field(None, description="the study (TOML, for `virtbench run`) that "
                              "separates them: the environment before and after and one "
                              "environment per option")
    reason: str = Field("", description="why suspected or undecided, in words")


class HistorySeries(Record):
    """One series: a host, an environment (by label), a benchmark case with its parameters
    and a metric; its value per run, or its ratio to the reference per run."""

    kind: Literal["value", "ratio"] = Field("value", description="value: the run's trimmed "
                                            "mean; ratio: its paired ratio to the reference "
                                            "(cancels the host's drift)")
    host: str | None = Field(None, description="the host the runs ran on")
    environment: str = Field("", description="the environment's label (name= keeps it "
                             "across a change of options or versions)")
    reference: str | None = Field(None, description="a ratio series: the reference's label")
    benchmark: str = Field("", description="the benchmark case's label")
    params: dict[str, Any] = Field(default_factory=dict, description="its parameters")
    quick: bool = Field(False, description="quick sizes")
    metric: str = Field("", description="the metric's name")
    unit: str = Field("", description="its unit (a ratio series: the ratio has none)")
    higher_is_better: bool = Field(True, description="its direction")
    runs: int = Field(0, description="points in the series")
    noise_floor_pct: float | None = Field(None, description="the series' run-to-run noise, "
                                          "% (robust scale of successive differences)")
    mde_pct: float | None = Field(None, description="the smallest change it can see at a "
                                  "fact change with 2 runs after (80 % power, alpha)")
    drift_mde_pct: float | None = Field(None, description="the smallest step with 2 runs "
                                        "after it the change-point search can see")
    note: str | None = Field(None, description="why the series has no detection, if it has "
                             "none")
    points: list[HistoryPoint] = Field(default_factory=list, description="one per run, "
                                       "oldest first")
    changes: list[HistoryChange] = Field(default_factory=list, description="the points "
                                         "where its level may have moved")


class HistoryReport(Record):
    """`virtbench history`: every series of the runs read, with its changes."""

    schema_version: str = Field(HISTORY_SCHEMA_VERSION, description="this report's version")
    store: str = Field("", description="the store read (no password)")
    series_name: str | None = Field(None, description="--series: only the runs tagged so")
    host: str | None = Field(None, description="--host: only this host's runs")
    runs: int = Field(0, description="complete runs read")
    threshold_pct: Number = Field(defaults.THRESHOLD_PCT,
                                  description="the band of 'no change', ±%")
    alpha: Number = Field(defaults.ALPHA, description="the significance level")
    correction: Literal["holm", "bh"] = Field(defaults.CORRECTION,
                                              description="the correction over "
                                              "every fact point tested")
    fact_points_tested: int = Field(0, description="the family's size")
    penalty_c: Number = Field(0.0, description="the change-point search's penalty per "
                              "change, in units of sigma^2 log(n)")
    series: list[HistorySeries] = Field(default_factory=list, description="the series")
    # the complete runs left out as damaged, one line each (virtbench/results/history/series.py):
    # said beside the report (the command's stderr), not a part of it
    _left_out: list[str] = PrivateAttr(default_factory=list)

    @property
    def left_out(self) -> list[str]:
        return self._left_out
