"""An exit profile in the report, beside the overheads it explains (docs/profiles.md)."""
from __future__ import annotations

from pydantic import ConfigDict, Field

from .base import Record


class ReasonRow(Record):
    """Exits (KVM) or would-be exits (TCG: pio, mmio) of one reason."""

    reason: str = ""
    count: int = 0
    share_pct: float = Field(0.0, description="share of the exits, %")
    time_share_pct: float | None = Field(None, description="KVM: share of the time spent "
                                                           "handling them, %")


class FunctionRow(Record):
    """Exits caused at one guest address, with the function it is in."""

    address: str = Field("", description="hex")
    function: str | None = Field(None, description="symbol+offset, null when unknown")
    caller: str | None = Field(None, description="the caller of a generic accessor")
    count: int = 0
    share_pct: float = Field(0.0, description="share of the exits, %")
    device: str | None = Field(None, description="MMIO region or port")


class Explained(Record):
    """An overhead measured for the profiled environment x benchmark."""

    metric: str = ""
    unit: str = ""
    overhead_pct: float | None = None
    verdict: str | None = None


class Profile(Record):
    """One profiled trial of an environment x benchmark (never a measured trial)."""

    model_config = ConfigDict(extra="allow")

    environment: str = ""
    benchmark: str = ""
    status: str = Field("ok", description="ok, or failed (then `error` says why)")
    error: str | None = None
    wall_s: float | None = Field(None, description="the profiled trial's own time")
    source: str | None = Field(None, description="kvm: VM exits; tcg: would-be exits")
    duration_s: float | None = Field(None, description="how long it recorded")
    by_reason: list[ReasonRow] = Field(default_factory=list)
    by_function: list[FunctionRow] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    explains: list[Explained] = Field(default_factory=list,
                                      description="the overheads it explains")
