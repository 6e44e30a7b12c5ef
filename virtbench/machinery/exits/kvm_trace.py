"""The kvm:kvm_exit / kvm:kvm_entry tracepoints as exits by reason and by guest RIP (pure).

Reads the text of /sys/kernel/tracing/trace_pipe and of `perf script`, whatever the kernel's print format:

- older kernels: `kvm_exit: reason IO_INSTRUCTION rip 0xce93 info 600048 0`, `kvm_entry: vcpu 0`
  (2.6/3.x: `reason io_instruction rip 0x...`, no info);
- newer kernels: `kvm_exit: vcpu 0 reason EPT_VIOLATION rip 0x1 info1 0x.. info2 0x.. intr_info 0x..
  error_code 0x..`, `kvm_entry: vcpu 0, rip 0x1`;
- AMD hosts print the SVM names (`npf`, `hlt`, `msr`, `io`, `vintr`, ...); reasons are kept as printed;
- perf script prefixes the event with "kvm:" and right-aligns it; trace_pipe gives "task-TID [CPU] flags
  time:", perf script "comm TID [CPU] time:" or, with `-F tid,cpu,time,event,trace`, "TID [CPU] time:".

Records wrapped as mail and terminals publish them are joined back: a header ending in "time:" with its
event on the next line, and a kvm_exit cut after "rip" with the address on the next line.

With timestamps, each exit is paired with the next kvm_entry of the same vCPU thread (or, without thread
ids, the same vCPU): the time in between is the time spent handling that exit, summed per reason.
For port I/O exits (VMX IO_INSTRUCTION, SVM io) the port is bits 31:16 of the first info word.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from virtbench.foundations.model.profile import FunctionRow, ReasonRow
from virtbench.machinery.exits.exit_profile import shares

Symbolise = Callable[[int], "tuple[str | None, str | None] | None"]

PORT_IO_REASONS = frozenset({"IO_INSTRUCTION", "io_instruction", "io", "EXIT_IOIO"})

_EVENT = re.compile(r"(?:^|\s)(?:kvm:)?(?P<event>kvm_exit|kvm_entry):\s+(?P<payload>.*?)\s*$")
_TIME = re.compile(r"(\d+\.\d+):\s*$")
_TID = re.compile(r"(?:^|[\s-])(\d+)\s+\[\d+\]")
_EXIT = re.compile(
    r"^(?:vcpu (?P<vcpu>\d+) )?reason (?P<reason>\S+)(?: rip (?P<rip>0x[0-9a-fA-F]+))?"
    r"(?: info1? (?P<info1>(?:0x)?[0-9a-fA-F]+)(?: (?:info2 )?(?P<info2>(?:0x)?[0-9a-fA-F]+))?)?")
_ENTRY = re.compile(r"^vcpu (?P<vcpu>\d+)(?:, rip (?P<rip>0x[0-9a-fA-F]+))?")
_HEADER_ONLY = re.compile(r"\d+\.\d+:\s*$")
_WRAPPED_EVENT = re.compile(r"^\s+(?:kvm:)?\w+: ")
_WRAPPED_RIP = re.compile(r"^\s*0x[0-9a-fA-F]+\b")


@dataclass(frozen=True)
class KvmExit:
    stream: str                 # the vCPU thread ("5665"), else "vcpu N", else "?"
    vcpu: int | None
    time_s: float | None
    reason: str
    rip: int | None
    info1: int | None

    @property
    def port(self) -> int | None:
        if self.reason in PORT_IO_REASONS and self.info1 is not None:
            return (self.info1 >> 16) & 0xFFFF
        return None


@dataclass
class KvmExitTrace:
    exits: list[KvmExit] = field(default_factory=list)
    time_by_reason_s: dict[str, float] = field(default_factory=dict)
    paired: int = 0             # exits whose handling time is known (a later kvm_entry on the same vCPU)

    @property
    def by_reason(self) -> Counter[str]:
        return Counter(e.reason for e in self.exits)

    @property
    def by_rip(self) -> Counter[int]:
        return Counter(e.rip for e in self.exits if e.rip is not None)

    def ports_at(self, rip: int) -> Counter[int]:
        return Counter(e.port for e in self.exits if e.rip == rip and e.port is not None)

    def reason_rows(self) -> list[ReasonRow]:
        """Exits by reason, most first; time_share_pct from the exit->entry pairs (None without them)."""
        counts = self.by_reason
        pct = shares(dict(counts))
        total_time = sum(self.time_by_reason_s.values())
        rows = [ReasonRow(reason=reason, count=n, share_pct=round(pct[reason], 2),
                          time_share_pct=round(100.0 * self.time_by_reason_s.get(reason, 0.0)
                                               / total_time, 2) if total_time > 0 else None)
                for reason, n in counts.items()]
        return sorted(rows, key=lambda r: (-r.count, r.reason))

    def function_rows(self, symbolise: Symbolise | None = None, top: int | None = None) -> list[FunctionRow]:
        """Exits by guest RIP, most first: address in hex, function/caller from `symbolise(rip)` (None
        without it), device "port 0xNN" where the exits at that RIP are port I/O."""
        counts = self.by_rip
        total = sum(counts.values())
        rows = []
        for rip, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]:
            function, caller = (symbolise(rip) or (None, None)) if symbolise else (None, None)
            ports = self.ports_at(rip)
            device = f"port {ports.most_common(1)[0][0]:#x}" if ports else None
            rows.append(FunctionRow(address=f"{rip:#x}", function=function, caller=caller, count=n,
                                    share_pct=round(100.0 * n / total, 2), device=device))
        return rows


def parse_kvm_exit_lines(text: str) -> KvmExitTrace:
    """Every kvm_exit of `text` (other events ignored, kvm_nested_vmexit included), paired with kvm_entry."""
    trace = KvmExitTrace()
    pending: dict[str, KvmExit] = {}
    for line in unwrap(text):
        m = _EVENT.search(line)
        if not m:
            continue
        prefix, payload = line[:m.start()], m.group("payload")
        t = _TIME.search(prefix)
        time_s = float(t.group(1)) if t else None
        tid = _TID.search(prefix)
        if m.group("event") == "kvm_exit":
            e = _EXIT.match(payload)
            if not e:
                continue
            vcpu = _int(e.group("vcpu"))
            stream = tid.group(1) if tid else (f"vcpu {vcpu}" if vcpu is not None else "?")
            ex = KvmExit(stream, vcpu, time_s, e.group("reason"), _hex(e.group("rip")), _hex(e.group("info1")))
            trace.exits.append(ex)
            pending[stream] = ex
        else:
            e = _ENTRY.match(payload)
            stream = tid.group(1) if tid else (f"vcpu {e.group('vcpu')}" if e else "?")
            ex = pending.pop(stream, None) or (None if tid else pending.pop("?", None))
            if ex is not None and ex.time_s is not None and time_s is not None:
                trace.time_by_reason_s[ex.reason] = trace.time_by_reason_s.get(ex.reason, 0.0) + (
                    time_s - ex.time_s)
                trace.paired += 1
    return trace


_PIO = re.compile(r"(?:^|\s)(?:kvm:)?kvm_pio:\s+pio_(?P<dir>read|write) at (?P<port>0x[0-9a-fA-F]+)")


def parse_kvm_pio_lines(text: str) -> Counter[tuple[int, str]]:
    """kvm:kvm_pio records (port I/O that KVM emulated or passed to QEMU) by (port, "read"|"write"). They fire
    where kvm_exit does not (KVM under PVM), so they name the ports even without RIPs."""
    return Counter((int(m.group("port"), 16), m.group("dir"))
                   for line in unwrap(text) if (m := _PIO.search(line)))


def pio_note(pio: Counter[tuple[int, str]], top: int = 8) -> list[str]:
    """One note naming the busiest ports, or none."""
    if not pio:
        return []
    busiest = ", ".join(f"{port:#x} {d} {n}" for (port, d), n in
                        sorted(pio.items(), key=lambda kv: (-kv[1], kv[0]))[:top])
    return [f"port I/O by port (kvm:kvm_pio, {sum(pio.values())} records): {busiest}"]


def unwrap(text: str) -> list[str]:
    """Lines of `text` with wrapped records joined back (see the module's doc)."""
    out: list[str] = []
    for line in text.splitlines():
        if out and ((_HEADER_ONLY.search(out[-1]) and _WRAPPED_EVENT.match(line))
                    or (out[-1].rstrip().endswith(" rip") and "kvm_exit:" in out[-1]
                        and _WRAPPED_RIP.match(line))):
            out[-1] = out[-1].rstrip() + " " + line.strip()
        else:
            out.append(line)
    return out


def _int(s: str | None) -> int | None:
    return None if s is None else int(s)


def _hex(s: str | None) -> int | None:
    return None if s is None else int(s, 16)
