"""`perf kvm stat report` as rows of exits by reason (pure; no perf run here).

perf has printed the report in three shapes, all read here:

- perf 3.7 to 4.x: "Analyze events for all VCPUs:", columns Samples, Samples%, Time%, Avg time;
- perf 4.x to 6.x (Debian's 6.1 among them): "Analyze events for all VMs, all VCPUs:", with Min Time and
  Max Time before Avg time. Both end with "Total Samples:N, Total events handled time:Tus.";
- newer perf (histograms): "Event name  Samples  Sample%  Time (ns)  Time%  Max Time (ns)  Min Time (ns)
  Mean Time (ns)", times in nanoseconds, no footer.

The first column is the exit reason for `--event=vmexit` (VMX names on Intel, SVM names on AMD, whatever the
architecture calls them elsewhere), "0xADDR:R|W" for `--event=mmio` and "0xPORT:PIN|POUT" for
`--event=ioport`. A reason perf cannot name is printed "UNKNOWN" after a line "unknown kvm exit code:N on
VMX" (the PVM module's exits, for one): such rows come out as "UNKNOWN(N)". perf 6.1 prints this report on
stderr, not stdout.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from virtbench.core.errors import VirtbenchError
from virtbench.foundations.model.profile import ReasonRow


class KvmProfileError(VirtbenchError):
    """A KVM profile could not be taken or read; the message names the thing and the fix."""


@dataclass(frozen=True)
class ReasonTiming:
    """Time spent handling one reason's exits, in microseconds (None where the report has no column)."""

    min_us: float | None
    max_us: float | None
    avg_us: float | None
    total_us: float | None = None      # the histogram format gives the total; the others do not


@dataclass
class KvmStatReport:
    key: str                           # "VM-EXIT", "MMIO Access", "IO Port Access" or "Event name"
    scope: str | None                  # "Analyze events for all VMs, all VCPUs:" or None
    rows: list[ReasonRow] = field(default_factory=list)
    timings: dict[str, ReasonTiming] = field(default_factory=dict)
    total_samples: int | None = None   # the footer's, when there is one
    total_time_us: float | None = None

    def notes(self) -> list[str]:
        out = []
        if self.scope:
            out.append(f"perf kvm stat: {self.scope.rstrip(':')}")
        if self.total_samples is not None:
            out.append(f"perf kvm stat: {self.total_samples} samples, "
                       f"{self.total_time_us:.2f} us handling them")
        for reason, t in self.timings.items():
            if t.avg_us is not None:
                out.append(f"{reason}: avg {t.avg_us:.2f} us" + (
                    f", min {t.min_us:.2f} us, max {t.max_us:.2f} us" if t.max_us is not None else ""))
        return out


_HEADER = re.compile(r"^\s*(?P<key>VM-EXIT|MMIO Access|IO Port Access|[A-Z-]+-EVENT)\s+Samples\s+Samples%")
_HIST_HEADER = re.compile(r"^\s*Event name\s+Samples\s+Sample%\s+Time \(ns\)")
_SCOPE = re.compile(r"^\s*(Analyze events for .*:)\s*$")
_UNKNOWN = re.compile(r"^\s*unknown kvm exit code:\s*(-?\d+)")
_ROW = re.compile(
    r"^\s*(?P<reason>\S+)\s+(?P<count>\d+)\s+(?P<share>[\d.]+)%\s+(?P<tshare>[\d.]+)%"
    r"(?:\s+(?P<min>[\d.]+)us\s+(?P<max>[\d.]+)us)?\s+(?P<avg>[\d.]+)us"
    r"(?:\s*\(\s*\+-\s*[\d.]+%\s*\))?\s*$")
_HIST_ROW = re.compile(
    r"^\s*(?P<reason>\S+)\s+(?P<count>\d+)\s+(?P<share>[\d.]+)%\s+(?P<time>\d+)\s+(?P<tshare>[\d.]+)%"
    r"\s+(?P<max>\d+)\s+(?P<min>\d+)\s+(?P<mean>\d+)\s*$")
_FOOTER = re.compile(r"Total Samples:\s*(\d+),\s*Total events handled time:\s*([\d.]+)us")


def read_perf_kvm_stat_report(text: str) -> KvmStatReport:
    """The whole report: rows, timings, the footer. Raises KvmProfileError when `text` holds no report."""
    lines = text.splitlines()
    start, hist = _find_header(lines)
    if start is None:
        first = next((ln.strip() for ln in lines if ln.strip()), "(empty)")
        raise KvmProfileError(
            f"perf kvm stat report: no VM-EXIT table in its output (first line: {first[:80]!r}); "
            "run it as `perf kvm -i FILE stat report --event=vmexit` and read stderr")
    key = "Event name" if hist else _HEADER.match(lines[start]).group("key")
    scope = next((m.group(1).strip() for ln in lines[:start] if (m := _SCOPE.match(ln))), None)
    report = KvmStatReport(key=key, scope=scope)
    unknown: str | None = None
    for line in lines[start + 1:]:
        if m := _UNKNOWN.match(line):
            unknown = m.group(1)
            continue
        if m := _FOOTER.search(line):
            report.total_samples, report.total_time_us = int(m.group(1)), float(m.group(2))
            break
        m = (_HIST_ROW if hist else _ROW).match(line)
        if not m:
            continue
        reason = m.group("reason")
        if reason == "UNKNOWN" and unknown is not None:
            reason = f"UNKNOWN({unknown})"
        unknown = None
        _add(report, reason, m, hist)
    return report


def parse_perf_kvm_stat_report(text: str) -> list[ReasonRow]:
    """Exits by reason (count = Samples, share_pct = Samples%, time_share_pct = Time%), in report order."""
    return read_perf_kvm_stat_report(text).rows


def _find_header(lines: list[str]) -> tuple[int | None, bool]:
    for i, line in enumerate(lines):
        if _HIST_HEADER.match(line):
            return i, True
        if _HEADER.match(line):
            return i, False
    return None, False


def _add(report: KvmStatReport, reason: str, m: re.Match, hist: bool) -> None:
    count, share, tshare = int(m.group("count")), float(m.group("share")), float(m.group("tshare"))
    report.rows.append(ReasonRow(reason=reason, count=count, share_pct=share,
                                     time_share_pct=tshare))
    if hist:
        report.timings[reason] = ReasonTiming(
            min_us=int(m.group("min")) / 1000, max_us=int(m.group("max")) / 1000,
            avg_us=int(m.group("mean")) / 1000, total_us=int(m.group("time")) / 1000)
    else:
        report.timings[reason] = ReasonTiming(
            min_us=_float(m.group("min")), max_us=_float(m.group("max")), avg_us=float(m.group("avg")))


def _float(s: str | None) -> float | None:
    return None if s is None else float(s)
