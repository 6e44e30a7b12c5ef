"""A density sweep's report (`virtbench density --format json`): per benchmark the curve of
throughput against the number of guests running it at once, the knee and why the sweep
stopped (docs/lifecycle.md)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from .base import SCHEMA_VERSION, Number, Record, read_schema_version

StopReason = Literal["qos", "aggregate_flat", "max", "time", "memory", "failed", "interrupted"]


class Throughput(Record):
    """A throughput (higher is better) over a step's trials."""

    mean: float = Field(0.0, description="trimmed mean (the published method)")
    ci_low: float | None = Field(None, description="95 % bootstrap CI, low")
    ci_high: float | None = Field(None, description="95 % bootstrap CI, high")
    n: int = Field(0, description="samples (successful trials)")


class DensityStep(Record):
    """N guests running the benchmark at once."""

    count: int = Field(0, description="guests (instances) at once")
    run_id: str = Field("", description="the step's run in the store (`virtbench report` it)")
    aggregate: Throughput = Field(default_factory=Throughput,
                                  description="the group's throughput: a rate over one "
                                              "common interval; a job's time as N / makespan")
    per_guest: list[Throughput] = Field(default_factory=list,
                                        description="each guest's throughput (a job's time: "
                                                    "1 / its seconds)")
    slowest_share: float | None = Field(None, description="the slowest guest's throughput / "
                                                          "the single guest's")
    fairness: float | None = Field(None, description="Jain's index of the guests' throughputs")
    host_available_mib: float | None = Field(None, description="the host's MemAvailable "
                                                               "before the step")
    pss_mib: float | None = Field(None, description="host memory of all its guests "
                                                    "together: their PSS (benchmark "
                                                    "footprint), MiB")
    overhead_mib: float | None = Field(None, description="their VMMs' own memory together "
                                                         "(PSS minus guest RAM), MiB")


class DensityCurve(Record):
    """One environment kind x benchmark: its steps, the knee, why it stopped."""

    environment: str = Field("", description="the environment's spec, without instances")
    benchmark: str = Field("", description="the benchmark case's label")
    metric: str = Field("", description="the metric judged (its throughput form)")
    unit: str = Field("", description="the throughput's unit (a time metric: jobs/s)")
    reference: bool = Field(False, description="the reference curve (native processes at "
                                               "the same counts), not judged for the sweep")
    steps: list[DensityStep] = Field(default_factory=list, description="each count measured")
    knee: int | None = Field(None, description="the last count with every guest above the "
                                               "floor and the aggregate still rising")
    stop_reason: StopReason | None = Field(None, description="the rule that ended the curve "
                                           "(null: it still scaled at its last step)")
    why: str = Field("", description="the stop in words, with its figures")


class DensityRule(Record):
    """The quality-of-service rule."""

    per_guest_floor: Number = Field(0.5, description="share of the single guest's throughput "
                                                     "each guest must keep")
    min_gain: Number = Field(0.05, description="share of the best aggregate so far a step "
                                               "must add")


class DensityReport(Record):
    """`virtbench density`: the sweep's settings and its curves."""

    schema_version: Literal[SCHEMA_VERSION] = Field(SCHEMA_VERSION,
                                                    description="the report schema's version")
    _same_major = field_validator("schema_version", mode="before")(
        classmethod(lambda cls, v: read_schema_version(v)))
    run_id: str | None = Field(None, description="the sweep's own run in the store "
                                                 "(`virtbench report` it); null: not stored")
    environment: str = Field("", description="the environment spec swept")
    schedule: Literal["linear", "doubling"] = Field("linear", description="1, 2, 3 ... or "
                                                                          "1, 2, 4 ...")
    max_count: int = Field(0, description="the most guests it would run")
    trials: int = Field(0, description="trials per step")
    quick: bool = Field(False, description="quick benchmark sizes")
    rule: DensityRule = Field(default_factory=DensityRule, description="the QoS rule")
    stop_reason: StopReason | None = Field(None, description="why the sweep as a whole ended")
    failure: str | None = Field(None, description="the step that failed and why (stop "
                                                  "reason failed)")
    started: str | None = Field(None, description="when it started (ISO 8601, UTC)")
    finished: str | None = Field(None, description="when it ended")
    curves: list[DensityCurve] = Field(default_factory=list, description="per benchmark (and "
                                                                         "reference) a curve")
