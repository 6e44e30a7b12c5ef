"""One run's report (`virtbench report --format json`): the run, its benchmarks and
environments, a result row per environment x benchmark x metric with its comparison against
its reference, trials, warnings, method notes, published figures and exit profiles.
docs/report-schema.md is generated from these descriptions."""
from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from ...core import defaults, warning_kinds
from .base import SCHEMA_VERSION, Number, Record, read_schema_version
from .claims import ClaimResult, DeclaredView
from .decision import DisturbedTrial, PassOrFail, VsReference
from .differences import PairDifferences
from .headline import Headline
from .pricelist import PriceList
from .profile import Profile
from .tune import TuneReport
from .density import DensityReport

Scope = Literal["single", "aggregate", "instance", "spread", "fairness"]


class HostRun(Record):
    """One host's run in a fleet's report."""

    host: str = Field("", description="the worker's host name")
    id: str = Field("", description="its run's id")
    status: str = Field("", description="its run's status")


class Section(Record):
    """A benchmark case's measured section, calibrated once per run (virtbench/execution/run/sections.py):
    shorter than the minimum, it is repeated inside every trial (values per repetition)."""

    benchmark: str = Field("", description="the benchmark case's label")
    environment: str = Field("", description="where it was calibrated (the reference when "
                                             "it can run the case)")
    section_s: Number | None = Field(None, description="one repetition's measured section, "
                                     "s (the shortest of the calibration runs)")
    repetitions: int = Field(1, description="repetitions per trial (1: long enough)")
    min_section_s: Number = Field(defaults.MIN_SECTION_S,
                                  description="the minimum a trial's sections should "
                                  "last together, s (`--min-section`)")
    capped: bool = Field(False, description="the repetitions hit their cap short of the "
                                            "minimum")


class AdaptiveSummary(Record):
    """How a run with adaptive trials (`trials = "auto"`) ended (virtbench/execution/run/adaptive.py)."""

    stopped: str | None = Field(None, description="why it stopped: all decided, max_trials, "
                                "budget, no reference (null: still running or interrupted)")
    spent_s: Number | None = Field(None, description="wall-clock seconds of its sessions")
    budget_s: Number | None = Field(None, description="its budget, s (null: none)")
    min_trials: int | None = Field(None, description="the blocks every case got first")
    max_trials: int | None = Field(None, description="the most usable blocks a case gets")
    blocks: dict[str, dict[str, int]] = Field(default_factory=dict, description="environment "
                                              "-> benchmark case -> blocks run")
    undecided: dict[str, list[str]] = Field(default_factory=dict, description="\"environment "
                                            "· case\" -> why, for the cases a bound left "
                                            "undecided: a verdict inconclusive, never a "
                                            "decided one")
    resolution_pct: Number | None = Field(None, description="the resolution asked "
                                          "(`--resolution`): a pass ran on until a change "
                                          "of this many % was ruled out (null: none asked, "
                                          "it stopped when every verdict was decided)")
    unresolved: dict[str, list[str]] = Field(default_factory=dict, description="\"environment"
                                             " · case\" -> why, for the cases decided "
                                             "(pass) whose asked resolution a bound left "
                                             "unreached")


class RunInfo(Record):
    """The run: what was run, when, with which settings."""

    schema_version: Literal[SCHEMA_VERSION] = Field(
        SCHEMA_VERSION, description="the version of the report's schema "
                                    "(docs/report.schema.json)")
    _same_major = field_validator("schema_version", mode="before")(
        classmethod(lambda cls, v: read_schema_version(v)))
    id: str = Field("", description="the run's id (a fleet's report: the fleet's id)")
    study: str | None = Field(None, description="the study's name")
    started: str | None = Field(None, description="when it started (ISO 8601, UTC)")
    finished: str | None = Field(None, description="when it ended (null while running)")
    quick: bool = Field(False, description="quick sizes: a smoke run, not comparable to "
                                           "full-size figures")
    status: str | None = Field(None, description="running, complete, interrupted (a fleet: "
                                                 "partial when its hosts differ)")
    seed: int | None = Field(None, description="the seed of the trial order and statistics")
    baseline: str | None = Field(None, description="the label of the baseline environment")
    threshold_pct: Number = Field(defaults.THRESHOLD_PCT,
                                  description="the verdicts' equivalence threshold, %")
    alpha: Number = Field(defaults.ALPHA, description="the verdicts' significance level")
    analysis: Literal["paired", "sequential", "unpaired"] = Field(
        defaults.ANALYSIS,
        description="how the verdicts were made: paired (each block's ratio to the "
        "reference), sequential (the same, adaptive trials), unpaired (trimmed means, "
        "`--analysis unpaired`); rows say when they could not be paired")
    correction: Literal["holm", "bh"] | None = Field(
        defaults.CORRECTION,
        description="the correction of the verdicts over the run's family of rows: "
        "holm (Holm's step-down, family-wise error; the default) or bh (Benjamini-Hochberg, "
        "false discovery rate): the study's `correction`, or `report --correction`")
    study_baseline: str | None = Field(None, description="the study's own baseline when the "
                                       "report chose another (`report --baseline`)")
    trials_planned: int | None = Field(None, description="trials per environment x benchmark "
                                       "(null for adaptive trials: see `adaptive`)")
    trials_advised: int | None = Field(None, description="the trials virtbench advises for "
                                       f"this run: the published studies' {defaults.TRIALS}, "
                                       "or the blocks a "
                                       "lone difference among its compared rows needs to "
                                       "survive the correction (the few-samples warning's "
                                       "advice)")
    adaptive: AdaptiveSummary | None = Field(None, description="adaptive trials: why they "
                                             "stopped, the blocks each case got")
    sections: list[Section] = Field(default_factory=list, description="the cases whose "
                                    "measured section was calibrated, with their repetitions "
                                    "per trial")
    virtbench_version: str | None = Field(None, description="the virtbench that ran it")
    kernels_build: str | None = Field(None, description="virtbench's C kernels as the run "
                                      "built them: their sources' hash and the compiler "
                                      "(null: a run stored before it was recorded)")
    host: str | None = Field(None, description="the host it ran on (a fleet: its hosts)")
    fleet: str | None = Field(None, description="the fleet run it belongs to, if any")
    density_sweep: str | None = Field(None, description="the density sweep (its run's id) "
                                      "this run is a step of, if any")
    hosts: list[str] | None = Field(None, description="a fleet's report: its hosts with a "
                                                      "run, the first one the reference")
    runs: list[HostRun] | None = Field(None, description="a fleet's report: each host's run")


class Case(Record):
    """A benchmark as the study ran it."""

    label: str = Field("", description="the case's label (results' `benchmark`)")
    name: str = Field("", description="the benchmark's name (`virtbench benchmarks`)")
    params: dict[str, Any] = Field(default_factory=dict, description="its parameters")


_GROUP_LABEL = re.compile(r"^(?P<base>.+)/x(?P<n>\d+)$")


def instance_count(label: str, metadata: dict | None = None) -> int:
    """How many instances an environment measured at once: its metadata's `instances`, else
    (a run stored before the metadata said it) the N of its label `<member label>/xN`."""
    n = (metadata or {}).get("instances")
    if isinstance(n, int) and n > 1:
        return n
    m = _GROUP_LABEL.match(label)
    return int(m["n"]) if m else 1


def member_label(label: str) -> str:
    """The label of one instance: `qemu-kvm/x4` -> `qemu-kvm`."""
    m = _GROUP_LABEL.match(label)
    return m["base"] if m else label


class EnvironmentRecord(Record):
    """An environment of the run as stored, with its fingerprint (the environment itself,
    what runs benchmarks, is virtbench/measure/environments/)."""

    label: str = Field("", description="its label (results' `environment`)")
    kind: str = Field("", description="its kind: native, qemu, libvirt, container, ...")
    spec: str = Field("", description="the spec it was made from")
    options: dict[str, Any] = Field(default_factory=dict, description="its options")
    status: str = Field("", description="planned, up, failed, skipped")
    error: str | None = Field(None, description="why it failed, when it did")
    boot_s: float | None = Field(None, description="seconds until it was ready")
    metadata: dict[str, Any] = Field(default_factory=dict, description="its fingerprint: CPU, "
                                     "kernel, accelerator, devices...")
    note: str | None = Field(None, description="the study file's note on it")
    host: str | None = Field(None, description="a fleet's report: the host it ran on")

    @property
    def instances(self) -> int:
        """How many instances it measured at once (instance_count)."""
        return instance_count(self.label, self.metadata)


class MetricIdentity(Record):
    """What a result's metric is, beside its name (virtbench/core/metric_id.py)."""

    base: str = Field("", description="the benchmark's metric it is of")
    scope: Scope = Field("single", description="single: as the benchmark measures it; a "
                         "group of instances: aggregate, instance (with `instance`), spread "
                         "(max/min - 1, %), fairness (Jain's index)")
    instance: int | None = Field(None, description="the instance's index (scope instance)")


class PublishedMatch(Record):
    """The study's published figure for a result, beside the measured one."""

    ratio: Number | None = Field(None, description="the source's ratio (environment / "
                                                   "reference)")
    ratio_derived: bool = Field(False, description="derived from the source's values")
    value: Number | None = Field(None, description="the source's value")
    versus_value: Number | None = Field(None, description="the source's reference value")
    verdict: PassOrFail | None = Field(None, description="the source's own ✓/✗")
    source: str = Field("", description="where in the source (table, figure)")
    note: str | None = Field(None, description="the study's note on the figure")
    versus: str | None = Field(None, description="the reference's label, when not the "
                                                 "baseline")
    measured_ratio: float | None = Field(None, description="the measured ratio against the "
                                         "same reference")


class Result(Record):
    """One environment x benchmark x metric: its samples, statistics and comparison."""

    environment: str = Field("", description="the environment's label")
    benchmark: str = Field("", description="the benchmark case's label")
    metric: str = Field("", description="the metric's name, as shown (`triad_mb_s_i0`)")
    unit: str = Field("", description="its unit")
    higher_is_better: bool = Field(True, description="its direction")
    n: int = Field(0, description="samples (successful trials)")
    samples: list[float] = Field(default_factory=list, description="each trial's value")
    trials: list[int] = Field(default_factory=list, description="each sample's trial number "
                                                                "(from 1)")
    failed_trials: int = Field(0, description="failed trials of this environment x benchmark")
    planned_trials: int | None = Field(None, description="trials planned for it")
    aggregate: str | None = Field(None, description="a group's aggregate: how it was made "
                                  "(common-interval, sum, makespan, slowest, mean)")
    trimmed_mean: float = Field(0.0, description="the published method: drop the highest and the "
                                "lowest sample, mean of the rest")
    median: float = Field(0.0, description="the median")
    stdev: float | None = Field(None, description="the standard deviation")
    cv: float | None = Field(None, description="the coefficient of variation (fraction)")
    ci_low: float | None = Field(None, description="95 % bootstrap CI of the trimmed mean")
    ci_high: float | None = Field(None, description="95 % bootstrap CI of the trimmed mean")
    vs_baseline: VsReference | None = Field(None, description="against its reference; null "
                                            "for the reference itself or with none")
    vs_others: list[VsReference] = Field(default_factory=list, description="against the "
                                         "environment's further references (the study's "
                                         "`versus`): before/after verdicts of the same run")
    disturbed: list[DisturbedTrial] = Field(default_factory=list, description="trials of "
                                            "this row marked disturbed: left out of every "
                                            "statistic, with why")
    reference_note: str | None = Field(None, description="why there is no comparison")
    no_verdict: str | None = Field(None, description="the same in a few words")
    published: PublishedMatch | None = Field(None, description="the study's published "
                                             "figure for it")
    metric_id: MetricIdentity = Field(default_factory=MetricIdentity,
                                      description="what the metric is, beside its name")

    @model_validator(mode="before")
    @classmethod
    def _own_metric(cls, data):
        """A row given without an identity is a benchmark's own metric."""
        if isinstance(data, dict) and data.get("metric_id") is None:
            data = {**data, "metric_id": {"base": data.get("metric", ""), "scope": "single"}}
        return data


class TrialCount(Record):
    """Trials of an environment x benchmark."""

    environment: str = Field("", description="the environment's label")
    benchmark: str = Field("", description="the benchmark case's label")
    planned: int | None = Field(None, description="planned (at least those run)")
    ok: int = Field(0, description="successful")
    failed: int = Field(0, description="failed")


class EvidenceValue(Record):
    """A value a failed trial measured before it failed."""

    value: float = Field(0.0, description="the value")
    unit: str = Field("", description="its unit")
    higher_is_better: bool = Field(True, description="its direction")


class FailedTrial(Record):
    """A failed trial and what it kept: evidence, never in the statistics."""

    environment: str = Field("", description="the environment's label")
    benchmark: str = Field("", description="the benchmark case's label")
    trial: int = Field(0, description="the trial's number (from 1)")
    error: str | None = Field(None, description="why it failed")
    exit: int | None = Field(None, description="its exit status")
    samples: dict[str, EvidenceValue] = Field(default_factory=dict,
                                              description="what it measured before failing")
    stdout_tail: str = Field("", description="the end of its stdout")
    stderr_tail: str = Field("", description="the end of its stderr")
    stdout_bytes: int | None = Field(None, description="stdout's whole size, when cut")
    stderr_bytes: int | None = Field(None, description="stderr's whole size, when cut")


class RunWarning(Record):
    """Something the reader should know before trusting a figure (docs/warnings.md)."""

    environment: str | None = Field(None, description="the environment it is about, if one")
    benchmark: str | None = Field(None, description="the benchmark case, if one")
    metric: str | None = Field(None, description="the metric, if one")
    kind: str = Field("", description="its code, in docs/warnings.md")
    message: str = Field("", description="what happened and what to do")
    severity: Literal["error", "warning", "note"] | None = Field(
        None, description="error: part of the study was not measured; warning: read the "
        "figures with care; note: how something was measured (null: a kind this virtbench "
        "does not know)")
    doc: str | None = Field(None, description="where docs/warnings.md explains its kind")
    detail: str | None = Field(None, description="the raw text the message puts in words (a "
                               "tool's own error line), when it does (`--verbose` shows it)")

    @model_validator(mode="before")
    @classmethod
    def _catalogued(cls, data):
        """Its severity and documentation, from the catalogue (virtbench/core/warning_kinds.py)."""
        if isinstance(data, dict):
            kind = warning_kinds.get(data.get("kind", ""))
            if kind is not None:
                data = {"severity": kind.severity, "doc": kind.anchor, **data}
        return data


class WarningGroup(Record):
    """The warnings of one kind as the text formats show them: one line, the places it
    affects and one piece of advice that applies on this host (docs/warnings.md, "The
    grouped view"). Every warning stays in `warnings`."""

    kind: str = Field("", description="its code, in docs/warnings.md")
    severity: Literal["error", "warning", "note"] | None = Field(
        None, description="the kind's severity (null: a kind this virtbench does not know)")
    doc: str | None = Field(None, description="where docs/warnings.md explains its kind")
    count: int = Field(0, description="how many warnings of this kind the run has")
    places: list[str] = Field(default_factory=list, description="what they affect, in "
                              "order: \"environment · benchmark · metric\", \"environment · "
                              "benchmark (N metrics)\", \"environment · benchmark\" or "
                              "\"environment\"")
    summary: str = Field("", description="what they say: their one message when they say the "
                         "same, else the kind's gist with its figures' range")
    advice: str | None = Field(None, description="the one thing to do that applies on this "
                               "host and run (null: none, or it is in the summary)")
    line: str = Field("", description="the one line the text formats print after the kind: "
                      "how many, the places (the first few), the summary and the advice")


class MethodNote(Record):
    """Where virtbench's method deviates from the published study's, per benchmark."""

    benchmark: str = Field("", description="the benchmark case's label")
    note: str = Field("", description="how virtbench's method differs from the source's")


class PublishedFigure(Record):
    """A published figure of the study that no measured result matches."""

    model_config = ConfigDict(extra="allow")

    environment: str = Field("", description="the environment's spec")
    benchmark: str = Field("", description="the benchmark case's label")
    metric: str = Field("", description="the metric's name")
    ratio: Number | None = Field(None, description="the source's ratio")
    ratio_derived: bool = Field(False, description="derived from the source's values")
    value: Number | None = Field(None, description="the source's value")
    versus: str | None = Field(None, description="the reference's spec, when not the "
                                                 "baseline")
    versus_value: Number | None = Field(None, description="the source's reference value")
    verdict: PassOrFail | None = Field(None, description="the source's own ✓/✗")
    source: str = Field("", description="where in the source (table, figure)")
    note: str | None = Field(None, description="the study's note on the figure")
    unmeasured: str | None = Field(None, description="why virtbench cannot measure it here")


class MigrationTimeline(Record):
    """One live migration as its guest's workload felt it (benchmark migrate; docs/lifecycle.md)."""

    environment: str = Field("", description="the environment's label")
    benchmark: str = Field("", description="the benchmark case's label")
    trial: int = Field(0, description="the trial's number (from 1)")
    total_s: float | None = Field(None, description="QEMU's total time, s")
    downtime_s: float | None = Field(None, description="QEMU's downtime, s")
    downtime_guest_s: float | None = Field(None, description="the largest gap between the "
                                           "guest ticker's lines in the migration's window, s")
    gap_at_s: float | None = Field(None, description="where that gap ended, s from the "
                                                     "migration's start")
    work_lost_s: float | None = Field(None, description="the workload's pages not written, "
                                                        "in seconds of its rate before")
    points: list[list[float]] = Field(default_factory=list, description="(s from the "
                                      "migration's start, pages written so far) as the host "
                                      "received the ticker's lines, at most 400")


class RunReport(Record):
    """`virtbench report --format json`: a run (or a fleet's runs, as one)."""

    run: RunInfo = Field(default_factory=RunInfo, description="the run")
    headline: list[Headline] = Field(default_factory=list, description="each environment "
                                     "against its reference in words, with a summary over "
                                     "its benchmarks: what the report says first")
    differences: list[PairDifferences] = Field(default_factory=list, description="each "
                                               "environment against its reference: the "
                                               "facts of their fingerprints that differ "
                                               "(virtbench/results/analysis/facts/differences.py)")
    benchmarks: list[Case] = Field(default_factory=list, description="its benchmark cases, "
                                   "in the study's order")
    environments: list[EnvironmentRecord] = Field(default_factory=list,
                                            description="its environments")
    results: list[Result] = Field(default_factory=list, description="one row per environment "
                                  "x benchmark x metric, by benchmark, metric, environment")
    trial_counts: list[TrialCount] = Field(default_factory=list, description="trials run and "
                                           "failed per environment x benchmark")
    failed_trial_evidence: list[FailedTrial] = Field(default_factory=list,
                                                     description="every failed trial")
    warnings: list[RunWarning] = Field(default_factory=list, description="what to know "
                                       "before trusting the figures")
    warning_groups: list[WarningGroup] = Field(default_factory=list, description="the "
                                               "warnings, one group per kind: what the text "
                                               "formats show (--verbose: each warning)")
    method_notes: list[MethodNote] = Field(default_factory=list, description="where the "
                                           "method deviates from the published study's")
    published_only: list[PublishedFigure] = Field(default_factory=list, description="the "
                                                  "study's published figures no result matches")
    profiles: list[Profile] = Field(default_factory=list, description="exit profiles")
    claims: list[ClaimResult] = Field(default_factory=list, description="the study's claims "
                                      "(its published paper's), each checked on this run")
    price_lists: list[PriceList] = Field(default_factory=list, description="the price "
                                         "list of each primitives case: primitive x "
                                         "environment, ratio to the baseline, linked exits")
    migrations: list[MigrationTimeline] = Field(default_factory=list, description="each "
                                                "live migration's timeline (benchmark "
                                                "migrate)")
    tune: TuneReport | None = Field(None, description="a tune run's screening, effects, "
                                    "recommendation and its confirmation (docs/tune.md); "
                                    "null for other runs")
    density: DensityReport | None = Field(None, description="a density sweep's run: its "
                                          "steps (each a run of its own), their guests' "
                                          "throughputs and QoS, the curves, why it stopped "
                                          "(docs/lifecycle.md); null for other runs")
    declared: list[DeclaredView] = Field(default_factory=list, description="the figures "
                                         "and tables the run's study declares ([[figure]], "
                                         "[[table]]: its paper's own)")


class ProfilesReport(Record):
    """`virtbench report --profile --format json`: the run and its exit profiles."""

    run: RunInfo = Field(default_factory=RunInfo, description="the run")
    profiles: list[Profile] = Field(default_factory=list, description="its exit profiles")

