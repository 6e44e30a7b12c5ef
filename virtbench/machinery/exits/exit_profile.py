"""What an exit profile holds (pure data), as docs/contract.md's JSON report gives it:

    {"environment", "benchmark", "source": "kvm" | "tcg", "duration_s",
     "by_reason":   [{"reason", "count", "share_pct", "time_share_pct"}],
     "by_function": [{"address", "function", "caller", "count", "share_pct", "device"}]}
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class ReasonRow:
    """Exits (KVM) or would-be exits (TCG: "pio", "mmio") of one reason."""

    reason: str
    count: int
    share_pct: float
    time_share_pct: float | None = None    # KVM only: share of the time spent handling them


@dataclass(frozen=True)
class FunctionRow:
    """Exits caused at one guest address, with the function it is in (symbolised)."""

    address: str                  # hex, "0xffffffff81234567"
    function: str | None          # "ata_sff_check_status+0x1c" style, or None if unknown
    caller: str | None            # the caller when `function` is a generic accessor
    count: int
    share_pct: float
    device: str | None = None     # MMIO region or port ("ide", "virtio-pci-notify", "port 0x1f7")


@dataclass
class Profile:
    source: str                   # "kvm" or "tcg"
    duration_s: float
    by_reason: list[ReasonRow] = field(default_factory=list)
    by_function: list[FunctionRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"source": self.source, "duration_s": self.duration_s,
                "by_reason": [asdict(r) for r in self.by_reason],
                "by_function": [asdict(r) for r in self.by_function],
                "notes": list(self.notes)}

    @classmethod
    def from_json(cls, data: dict) -> "Profile":
        return cls(source=data["source"], duration_s=data["duration_s"],
                   by_reason=[ReasonRow(**r) for r in data.get("by_reason", [])],
                   by_function=[FunctionRow(**r) for r in data.get("by_function", [])],
                   notes=list(data.get("notes", [])))


def shares(counts: dict[str, int]) -> dict[str, float]:
    """Each key's share of the total, in % (pure; empty or all-zero -> all 0)."""
    total = sum(counts.values())
    return {k: (100.0 * v / total if total else 0.0) for k, v in counts.items()}
