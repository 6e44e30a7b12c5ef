"""The method's defaults, in one place: every module that needs one imports it from here.

The published method (RIKEN 2012): 12 trials, drop the highest and the lowest, mean of the rest,
pass within 10 % of bare metal. virtbench adds a warm-up trial, pinning and a significance
level for its verdicts.
"""
TRIALS = 12           # measured trials (blocks) per environment x benchmark
WARMUP = 1            # unmeasured trials per environment x benchmark before the measured ones
THRESHOLD_PCT = 10.0  # the verdicts' band: within ±10 % of the reference passes
ALPHA = 0.05          # significance level of the verdicts
PIN = "auto"          # pin our kernels / vCPU threads to host CPUs when there are enough
ANALYSIS = "paired"   # the verdicts' analysis: paired blocks ("unpaired": Welch's)
CORRECTION = "holm"   # over the family of rows: Holm (FWER) ("bh": Benjamini-Hochberg, FDR)

# Measured sections (docs/decisions.md, "Measured sections"): a kernel whose measured section
# is shorter than this repeats it inside the trial until it is reached (pyperf's loops)
MIN_SECTION_S = 0.5
MAX_REPETITIONS = 200  # the most repetitions of one section per trial

# Adaptive trials (trials = "auto"): blocks until every verdict is decided or a bound is hit
MIN_TRIALS = 6         # blocks every case gets first (6: the sign-flip test can reach 0.05)
MAX_TRIALS = 60        # usable blocks at most per case (failed or disturbed ones re-run)

# Disturbed trials (docs/decisions.md, "Disturbed trials"): kept in the store, left out of
# the statistics, run again when trials are adaptive. Measured on the development machine (a
# 2-vCPU VM shared with other work): steal over a trial at most 1.9 %, median 0. A kernel
# alone on its CPU gets 0.98-0.99 of it; with other work's two TCG guests running, every
# trial got 0.31-0.55, so an absolute share would flag all of them or none: the CPU-share
# limit is relative to what the environment and case usually get in the run (their median)
STEAL_LIMIT_PCT = 10.0   # steal above this share of the host's CPU time over the trial
CPU_SHARE_LIMIT = 0.7    # a CPU-bound kernel that got less than this x its usual CPU share
CPU_SHARE_HISTORY = 3    # trials of an environment and case before their median is usual

# The density sweep (`virtbench density`, docs/lifecycle.md): guests added step by step
DENSITY_MAX_GUESTS = 8     # the most guests at once
DENSITY_TRIALS = 3         # trials per step
DENSITY_FLOOR = 0.5        # QoS: each guest keeps at least this share of one guest's throughput
DENSITY_MIN_GAIN = 0.05    # a step must raise the aggregate by this share of the best so far
DENSITY_MAX_S = 3600.0     # no new step after this long (seconds)


# The valid ranges of the numbers a user gives, on every command and in study files (the
# study schema and the CLI's flags both read them here; docs/contract.md)
from dataclasses import dataclass as _dataclass
from math import isfinite as _isfinite


@_dataclass(frozen=True)
class Range:
    """An interval of valid values: `low` (excluded when `low_open`) to `high` (None: no
    bound; excluded when `high_open`), and what the value is, with an example, for messages."""
    low: float
    high: float | None
    low_open: bool
    high_open: bool
    what: str
    example: str

    def contains(self, value: float) -> bool:
        if not _isfinite(value):
            return False
        if value < self.low or (self.low_open and value == self.low):
            return False
        if self.high is not None and (value > self.high or (self.high_open and value == self.high)):
            return False
        return True

    def text(self) -> str:
        """`(0, 0.5]`, `>= 0`."""
        if self.high is None:
            return f"{'>' if self.low_open else '>='} {self.low:g}"
        return (f"{'(' if self.low_open else '['}{self.low:g}, {self.high:g}"
                f"{')' if self.high_open else ']'}")

    def phrase(self) -> str:
        """`in (0, 0.5]`, `>= 0`: the range after what the value is."""
        return self.text() if self.high is None else f"in {self.text()}"

    def bounds(self) -> dict:
        """pydantic Field keywords for this range."""
        out = {"gt" if self.low_open else "ge": self.low}
        if self.high is not None:
            out["lt" if self.high_open else "le"] = self.high
        return out


ALPHA_RANGE = Range(0.0, 0.5, True, False, "a significance level", "0.05")
THRESHOLD_RANGE = Range(0.0, 100.0, True, True, "a verdict threshold in %", "10")
MIN_CHANGE_RANGE = Range(0.0, None, False, False, "a change in %", "5")

# Tunes (`virtbench tune`, docs/tune.md): a screening design over the knobs, then an A/B
TUNE_TRIALS = 4            # blocks of the screening: every configuration and the base each
TUNE_CONFIRM_BLOCKS = 6    # blocks of the A/B of the recommendation against the base, at least
                           # (6: the sign-flip test can reach 0.05)
TUNE_MIN_EFFECT_PCT = 5.0  # the smallest effect that matters, %
