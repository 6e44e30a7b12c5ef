"""What a benchmark yields: its metrics (name, unit, direction) and one trial's outcome.

Plain data shared by benchmarks (which make them), environments (a group of instances adds
its own metrics and merges outcomes), the runner and the store; it imports nothing of virtbench."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Metric:
    """One named number with a unit and a direction."""

    name: str
    unit: str
    higher_is_better: bool
    description: str = ""


@dataclass
class TrialOutcome:
    """What one trial produced: its metric values, or why it failed, and the raw output."""

    values: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    stdout: str = ""
    stderr: str = ""
    exit: int | None = None
    wall_s: float | None = None
    # (kind, message) pairs the store should keep with the trial, e.g. ("physical-limit", ...)
    warnings: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None
