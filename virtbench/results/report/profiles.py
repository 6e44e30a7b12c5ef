"""Exit profiles as report sections (pure): one per environment x benchmark, with the
overhead it explains, exits by reason and the top guest functions, as the Zhang et al.
tables give them. Every format renders these same rows."""
from __future__ import annotations

from dataclasses import dataclass

from ...foundations.model import Profile, ProfilesReport, RunReport
from .fmt import numbers

REASON_HEADER = ["reason", "count", "share", "time share"]
FUNCTION_HEADER = ["address", "function", "caller", "device / port", "count", "share"]
TOP = 10


def _share(x) -> str:
    return "—" if x is None else f"{x:.1f} %"


def explains_line(entry: Profile) -> str:
    parts = [f"{e.metric} {numbers.pct(e.overhead_pct)} ({e.verdict})"
             for e in entry.explains if e.overhead_pct is not None]
    return "overhead it explains: " + ("; ".join(parts) if parts else "none measured vs baseline")


@dataclass(frozen=True)
class ProfileLayout:
    """An exit profile as every format lays it out."""

    title: str
    subtitle: str
    explains: str
    reasons: list[list[str]]
    functions: list[list[str]]
    notes: list[str]
    profile: Profile


def section(entry: Profile, top: int = TOP) -> ProfileLayout:
    what = "VM exits" if entry.source == "kvm" else "would-be exits (TCG)"
    title = f"{entry.environment} · {entry.benchmark}"
    if entry.status != "ok":
        return ProfileLayout(title, f"no profile: {entry.error}", explains_line(entry), [], [],
                             [], entry)
    reasons = [[r.reason, str(r.count), _share(r.share_pct), _share(r.time_share_pct)]
               for r in entry.by_reason]
    functions = [[f.address, f.function or "?", f.caller or "", f.device or "", str(f.count),
                  _share(f.share_pct)] for f in entry.by_function[:top]]
    total = sum(r.count for r in entry.by_reason)
    return ProfileLayout(title, f"{what}: {total} in {entry.duration_s:.1f} s "
                                f"(the profiled trial, not a measured one)",
                         explains_line(entry), reasons, functions, list(entry.notes), entry)


def sections(analysis: RunReport, benchmark: str | None = None,
             top: int = TOP) -> list[ProfileLayout]:
    """One section per profile (of `benchmark` only, when given)."""
    return [section(e, top) for e in analysis.profiles
            if benchmark is None or e.benchmark == benchmark]


def only_profiles(analysis) -> ProfilesReport:
    """The analysis reduced to its run and its profiles (`virtbench report --profile`)."""
    analysis = RunReport.of(analysis)
    return ProfilesReport(run=analysis.run, profiles=analysis.profiles)
