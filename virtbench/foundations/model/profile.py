"""An exit profile in the report, beside the overheads it explains (docs/profiles.md)."""
from __future__ import annotations

from pydantic import ConfigDict, Field

from .base import Record


class ReasonRow(Record):
    """Exits (KVM) or would-be exits (TCG: pio, mmio) of one reason."""

    reason: str = Field("", description="the exit reason (KVM) or pio / mmio (TCG)")
    count: int = Field(0, description="how many")
    share_pct: float = Field(0.0, description="share of the exits, %")
    time_share_pct: float | None = Field(None, description="KVM: share of the time spent "
                                                           "handling them, %")


class FunctionRow(Record):
    """Exits caused at one guest address, with the function it is in."""

    address: str = Field("", description="hex")
    function: str | None = Field(None, description="symbol+offset, null when unknown")
    caller: str | None = Field(None, description="the caller of a generic accessor")
    count: int = Field(0, description="how many exits at this address")
    share_pct: float = Field(0.0, description="share of the exits, %")
    device: str | None = Field(None, description="MMIO region or port")


class Explained(Record):
    """An overhead measured for the profiled environment x benchmark."""

    metric: str = Field("", description="the result's metric")
    unit: str = Field("", description="its unit")
    overhead_pct: float | None = Field(None, description="its overhead against its "
                                                         "reference, %")
    verdict: str | None = Field(None, description="its verdict")


class Profile(Record):
    """One profiled trial of an environment x benchmark (never a measured trial)."""

    model_config = ConfigDict(extra="allow")

    environment: str = Field("", description="the environment's label")
    benchmark: str = Field("", description="the benchmark case's label")
    status: str = Field("ok", description="ok, or failed (then `error` says why)")
    error: str | None = Field(None, description="why there is no profile")
    wall_s: float | None = Field(None, description="the profiled trial's own time")
    source: str | None = Field(None, description="kvm: VM exits; tcg: would-be exits")
    duration_s: float | None = Field(None, description="how long it recorded")
    by_reason: list[ReasonRow] = Field(default_factory=list, description="exits by reason")
    by_function: list[FunctionRow] = Field(default_factory=list,
                                           description="exits by guest address, most first")
    notes: list[str] = Field(default_factory=list, description="how to read it")
    explains: list[Explained] = Field(default_factory=list,
                                      description="the overheads it explains")
