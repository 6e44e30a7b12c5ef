"""What `virtbench history` (and the web view's /series) is asked: which runs and series,
and the settings their changes are found with. Checked when it is made: a bad value is one
line naming the flag (exit 2)."""
from __future__ import annotations

from dataclasses import dataclass

from ...core import ranges
from ...core.defaults import ALPHA, ALPHA_RANGE, CORRECTION, THRESHOLD_PCT, THRESHOLD_RANGE
from ...core.errors import VirtbenchError
from ...foundations.stats.multiplicity import METHODS
from .series import SeriesKey


@dataclass(frozen=True)
class HistoryRequest:
    """The complete runs of `series` and of `host` (None: any), only the series of the
    environments, benchmark cases (labels) and metrics named (None or empty: all); a change
    is one outside ±`threshold_pct` %, at significance `alpha` after `correction` over every
    fact point tested. The defaults are core/defaults.py's."""

    series: str | None = None
    host: str | None = None
    environments: list[str] | None = None
    benchmarks: list[str] | None = None
    metrics: list[str] | None = None
    threshold_pct: float = THRESHOLD_PCT
    alpha: float = ALPHA
    correction: str = CORRECTION

    def __post_init__(self):
        ranges.check("--threshold", self.threshold_pct, THRESHOLD_RANGE)
        ranges.check("--alpha", self.alpha, ALPHA_RANGE)
        if self.correction not in METHODS:
            raise VirtbenchError(f"--correction {self.correction}: use "
                                 f"{' or '.join(METHODS)}")

    def wanted(self, key: SeriesKey) -> bool:
        """Whether the series `key` is one of those asked for."""
        return (not self.environments or key.environment in self.environments) and \
            (not self.benchmarks or key.benchmark in self.benchmarks) and \
            (not self.metrics or key.metric in self.metrics)
