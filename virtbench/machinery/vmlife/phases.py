"""Boot phases from two clocks (pure): where each phase starts and stops (docs/lifecycle.md).

A guest's boot is seen by the host (its CLOCK_MONOTONIC: when it started the VMM, when bytes
arrive from the guest's boot-timer port, when the agent first answers) and by the guest
itself (its kernel log: each line stamped by the kernel's own clock, which starts at 0 in the
kernel's early set-up). The guest's markers (guest/files/phase-mark) write a kernel-log line
before and after one byte to the boot-timer port; the host stamps the byte's arrival. Each
marker so gives the offset between the two clocks (host = guest + offset), known to within
half the time between its two lines.

The phases, each measured on one clock:

    vmm        host   VMM process start -> the firmware's first output (pc, q35: SeaBIOS's
                      debug port); where the firmware prints nothing (microvm's qboot) ->
                      the guest kernel's clock zero
    firmware   host   the firmware's first output -> the guest kernel's clock zero (mapped by
                      the first marker): firmware, the PVH option ROM, the kernel's earliest
                      set-up before its clock runs
    kernel     guest  clock zero -> "Run /init as init process" (the kernel's last line
                      before userspace's first instruction)
    initramfs  guest  /init runs -> marker r (the real root mounted, before switch_root)
    init       guest  marker r -> marker a (busybox init and rc on the real root: udev,
                      the network, sshd; the agent's service starts)
    agent      host   marker a (mapped by its own offset) -> the agent's first answer

    total      host   VMM process start -> the agent's first answer

    to_kernel  host   VMM process start -> the guest kernel's clock zero (vmm + firmware):
                      the firmware's share of the boot, whether or not the firmware prints
                      (Debian's OVMF prints nothing on the debug port, so its boot has no
                      firmware phase of its own and shows here). Not a phase: it overlaps
                      vmm and firmware, and is not in the sum.

The guest's phases are on its clock and the host's on the host's, so the phases sum to the
total only as far as the two clocks agree: the sum differs from the total by the first
marker's offset minus the last one's (`mismatch_s`), the drift of the guest's clock against
the host's over the boot.

Containers and sandboxes (container_phases), on the host's clock:

    runtime    host   the engine's run (`podman run`) -> the container's first process
                      exec'd (its start time in /proc, as its agent says it); for a sandbox
                      with a kernel of its own (gVisor's sentry) -> that kernel's clock zero
    sandbox    host   (gVisor) the sentry's clock zero -> the first process exec'd
    agent      host   the first process exec'd -> the agent's first answer
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

GUEST_PHASES = ("vmm_s", "firmware_s", "kernel_s", "initramfs_s", "init_s", "agent_s")
CONTAINER_PHASES = ("runtime_s", "sandbox_s", "agent_s")
ORDER = ("vmm_s", "firmware_s", "kernel_s", "initramfs_s", "init_s", "runtime_s", "sandbox_s",
         "agent_s")
FIRST, ROOT, AGENT = "i", "r", "a"   # the markers the phases are cut at (s: rc's start, kept)

_LINE = re.compile(r"^\[\s*(\d+\.\d+)\]\s?(.*)$")
_MARK = re.compile(r"^vb-phase ([a-z]) ([<>])\s*$")
_RUN_INIT = re.compile(r"^Run (\S+) as init process")


class PhaseError(ValueError):
    """The boot's record lacks what a phase needs (a marker, the kernel's line)."""


@dataclass
class KernelLog:
    """What the guest's kernel log says about its boot (parse_kmsg)."""

    run_init_s: float | None = None          # "Run /init as init process", guest clock
    init: str | None = None                  # what it ran
    marks: dict[str, tuple[float, float]] = field(default_factory=dict)  # name -> (<, >)


def parse_kmsg(text: str) -> KernelLog:
    """`dmesg` output (`[   1.234567] text` lines) -> the boot's lines (pure). The first
    "Run ... as init process" line; each marker's first `<` and `>` lines."""
    log = KernelLog()
    before: dict[str, float] = {}
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if not m:
            continue
        t, rest = float(m.group(1)), m.group(2).strip()
        run = _RUN_INIT.match(rest)
        if run and log.run_init_s is None:
            log.run_init_s, log.init = t, run.group(1)
            continue
        mark = _MARK.match(rest)
        if not mark:
            continue
        name, side = mark.groups()
        if side == "<":
            before.setdefault(name, t)
        elif name in before and name not in log.marks:
            log.marks[name] = (before[name], t)
    return log


@dataclass
class Offset:
    """host clock = guest clock + offset_s, from one marker, to within +- bound_s."""

    marker: str
    offset_s: float
    bound_s: float


def marker_offsets(log: KernelLog, stamps: list[tuple[float, str]]) -> dict[str, Offset]:
    """Per marker the host saw (its first byte of that name) and the kernel logged: the
    offset between the clocks, the midpoint of the marker's two lines against the byte's
    arrival (pure)."""
    seen: dict[str, float] = {}
    for t, text in stamps:
        for ch in text:
            seen.setdefault(ch, t)
    out = {}
    for name, (lo, hi) in log.marks.items():
        if name in seen:
            out[name] = Offset(name, seen[name] - (lo + hi) / 2, (hi - lo) / 2)
    return out


@dataclass
class Phases:
    """A boot cut into phases: seconds per phase (ORDER), the total, and how it was cut."""

    phases: dict[str, float]
    total_s: float
    detail: dict
    spans: dict[str, float] = field(default_factory=dict)   # overlapping spans (to_kernel_s)

    @property
    def sum_s(self) -> float:
        return sum(self.phases.values())

    @property
    def mismatch_pct(self) -> float:
        return 100.0 * (self.sum_s - self.total_s) / self.total_s if self.total_s else 0.0

    def values(self) -> dict[str, float]:
        return {**self.phases, **self.spans, "total_s": self.total_s}


_EFI = re.compile(r"^\[\s*\d+\.\d+\]\s?efi: EFI v\d", re.M)


def booted_by(kmsg: str) -> str:
    """What started the guest's kernel, from its log (pure): "uefi" when the kernel found
    EFI runtime services (`efi: EFI v2.70 by EDK II`), else "bios" (SeaBIOS, qboot)."""
    return "uefi" if _EFI.search(kmsg) else "bios"


def guest_phases(vmm_start: float, ready: float, kmsg: str, stamps: list[tuple[float, str]],
                 firmware: list[tuple[float, str]] | None = None) -> Phases:
    """A guest's boot phases (module docstring) from: the host's time at the VMM's start and
    at the agent's first answer, the guest's kernel log, the boot-timer port's bytes as the
    host stamped them, and the firmware's debug output likewise (None or [] when none). Pure;
    PhaseError when a needed line or marker is missing."""
    if ready < vmm_start:
        raise PhaseError("the agent answered before the VMM started")
    log = parse_kmsg(kmsg)
    if log.run_init_s is None:
        raise PhaseError("the kernel log has no 'Run ... as init process' line")
    offsets = marker_offsets(log, stamps)
    for name in (FIRST, ROOT, AGENT):
        if name not in log.marks:
            raise PhaseError(f"the kernel log has no marker {name!r} (vb-phase {name} < / >)")
        if name not in offsets:
            raise PhaseError(f"the host saw no byte {name!r} on the boot-timer port")
    first, last = offsets[FIRST], offsets[AGENT]
    zero_host = first.offset_s                       # the kernel's clock zero, on the host
    root_g, agent_g = log.marks[ROOT][0], log.marks[AGENT][0]
    fw_first = firmware[0][0] if firmware else None
    phases: dict[str, float] = {}
    if fw_first is not None and vmm_start <= fw_first <= zero_host:
        phases["vmm_s"] = fw_first - vmm_start
        phases["firmware_s"] = zero_host - fw_first
    else:
        phases["vmm_s"] = zero_host - vmm_start
    phases["kernel_s"] = log.run_init_s
    phases["initramfs_s"] = root_g - log.run_init_s
    phases["init_s"] = agent_g - root_g
    phases["agent_s"] = ready - (agent_g + last.offset_s)
    for name, value in phases.items():
        if value < 0:
            raise PhaseError(f"phase {name} came out negative ({value:.3f} s): the clocks or "
                             "markers disagree")
    detail = {
        "clock": "host CLOCK_MONOTONIC for vmm, firmware, agent; the guest kernel's log "
                 "clock for kernel, initramfs, init",
        "init": log.init,
        "booted_by": booted_by(kmsg),
        "offsets": {o.marker: {"offset_s": round(o.offset_s, 6), "bound_s": round(o.bound_s, 6)}
                    for o in offsets.values()},
        "edges_host_s": {"vmm_start": 0.0,
                         "firmware_first": None if fw_first is None else fw_first - vmm_start,
                         "firmware_last": firmware[-1][0] - vmm_start if firmware else None,
                         "kernel_zero": zero_host - vmm_start,
                         "agent_answer": ready - vmm_start},
        "edges_guest_s": {"run_init": log.run_init_s,
                          **{f"mark_{k}": v[0] for k, v in sorted(log.marks.items())}},
        "mismatch_s": round(first.offset_s - last.offset_s, 6),
    }
    return Phases(phases, ready - vmm_start, detail,
                  spans={"to_kernel_s": zero_host - vmm_start})


def container_phases(start: float, exec_host: float, ready: float,
                     kernel_zero: float | None = None) -> Phases:
    """A container's or sandbox's start on the host's clock (pure): runtime (the engine's run
    -> the container's first process exec'd), agent (-> its first answer); a sandbox whose
    kernel of its own started within the start (gVisor's sentry: its clock's zero,
    `kernel_zero` on the host's clock) also sandbox: runtime ends at its kernel's zero,
    sandbox runs from there to the exec."""
    if not start <= ready:
        raise PhaseError("the agent answered before the container was started")
    if not start <= exec_host <= ready:
        raise PhaseError(f"the container's process started at {exec_host - start:+.3f} s, "
                         f"outside the start ({ready - start:.3f} s)")
    if kernel_zero is not None and start <= kernel_zero <= exec_host:
        phases = {"runtime_s": kernel_zero - start, "sandbox_s": exec_host - kernel_zero}
    else:
        phases = {"runtime_s": exec_host - start}
    phases["agent_s"] = ready - exec_host
    return Phases(phases, ready - start,
                  {"clock": "host CLOCK_MONOTONIC (the environment's clock mapped by its "
                            "agent's offset)", "mismatch_s": 0.0,
                   "edges_host_s": {"start": 0.0, "exec": exec_host - start,
                                    "kernel_zero": None if kernel_zero is None
                                    else kernel_zero - start, "agent_answer": ready - start}})
