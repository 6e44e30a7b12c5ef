"""What one exit profiler recorded (pure data), as the store keeps it and docs/contract.md's
JSON report gives it; its rows are the result model's (foundations/model/profile.py), and the
report's profile entry (model.Profile) adds the environment, benchmark and what it explains:

    {"environment", "benchmark", "source": "kvm" | "tcg", "duration_s",
     "by_reason":   [{"reason", "count", "share_pct", "time_share_pct"}],
     "by_function": [{"address", "function", "caller", "count", "share_pct", "device"}]}
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...foundations.model.profile import FunctionRow, ReasonRow


@dataclass
class ExitProfile:
    """The exits one profiled trial recorded: by reason, by guest function, with notes."""

    source: str                   # "kvm" or "tcg"
    duration_s: float
    by_reason: list[ReasonRow] = field(default_factory=list)
    by_function: list[FunctionRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"source": self.source, "duration_s": self.duration_s,
                "by_reason": [r.model_dump() for r in self.by_reason],
                "by_function": [r.model_dump() for r in self.by_function],
                "notes": list(self.notes)}

    @classmethod
    def from_json(cls, data: dict) -> "ExitProfile":
        return cls(source=data["source"], duration_s=data["duration_s"],
                   by_reason=[ReasonRow(**r) for r in data.get("by_reason", [])],
                   by_function=[FunctionRow(**r) for r in data.get("by_function", [])],
                   notes=list(data.get("notes", [])))


def shares(counts: dict[str, int]) -> dict[str, float]:
    """Each key's share of the total, in % (pure; empty or all-zero -> all 0)."""
    total = sum(counts.values())
    return {k: (100.0 * v / total if total else 0.0) for k, v in counts.items()}
