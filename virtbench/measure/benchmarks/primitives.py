"""The price list of primitive operations: one system call, clock read, page fault, context
switch, wake-up, timer expiry, dependent load and exit to the device model, each in ns (timer
lateness in us), our own kernel (kernels/primitives.c) measuring each with its own calibrated
loop, as lmbench and pyperf do.

`only` picks families (syscall, pagefault, ctxsw, timer, memlat, ioport; default all). The
ioport family writes an I/O port and reads a device register: it runs only where the
environment declares `guest_root_io` (root in a guest virtbench boots). With only=all it is
added where the environment offers it and left out elsewhere; named explicitly, it is a need,
and an environment without it skips the case with the reason.
"""
from __future__ import annotations

from ...core.errors import VirtbenchError
from .base import Benchmark, Metric, ParseError, Span, Timing, kernel_result, late_of, number

# family -> its metrics (name, unit, description), in the kernel's order
FAMILIES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "syscall": (
        ("syscall_ns", "ns", "one trivial system call: getppid through syscall(2)"),
        ("clock_gettime_ns", "ns", "clock_gettime(CLOCK_MONOTONIC): the vDSO when the "
                                   "clocksource allows it, else a system call"),
        ("rdtsc_ns", "ns", "one rdtsc instruction"),
        ("cpuid_ns", "ns", "one cpuid (leaf 0): an unconditional exit under hardware "
                           "virtualization"),
    ),
    "pagefault": (
        ("pagefault_4k_ns", "ns", "first write to a fresh anonymous 4 KiB page (minor fault)"),
        ("pagefault_thp_ns", "ns", "first write to a fresh transparent 2 MiB page (allocated "
                                   "and zeroed whole)"),
        ("mmap_munmap_ns", "ns", "mapping one anonymous page and unmapping it, untouched"),
    ),
    "ctxsw": (
        ("ctxsw_same_cpu_ns", "ns", "one hand-off of a byte between two processes over pipes "
                                    "on the same CPU (half a round trip)"),
        ("ctxsw_cross_cpu_ns", "ns", "the same between two CPUs (a wake-up IPI in a guest)"),
        ("futex_cross_cpu_ns", "ns", "one futex wake-up hand-off between two threads on two "
                                     "CPUs"),
    ),
    "timer": (
        ("timer_p50_us", "us", "median lateness of a 1 ms absolute sleep (cyclictest)"),
        ("timer_p99_us", "us", "99th percentile lateness of a 1 ms absolute sleep"),
        ("timer_max_us", "us", "worst lateness of a 1 ms absolute sleep"),
    ),
    "memlat": tuple(
        (f"memlat_{ws}_{pg}_ns", "ns",
         f"one dependent load over a random cycle filling {what}, on {pages}")
        for pg, pages in (("4k", "4 KiB pages"), ("2m", "transparent 2 MiB pages"))
        for ws, what in (("l1", "half the L1 data cache"), ("l2", "half the L2 cache"),
                         ("llc", "half the last-level cache"),
                         ("llc4x", "4x the last-level cache"))),
    "ioport": (
        ("ioport_out_ns", "ns", "one outb to unused port 0xed: an exit the device model "
                                "answers with nothing"),
        ("mmio_read_ns", "ns", "one read of the HPET's counter: an MMIO exit to the device "
                               "model"),
    ),
}
FAMILY_NAMES = tuple(FAMILIES)
ALWAYS = tuple(f for f in FAMILY_NAMES if f != "ioport")
METRIC_FAMILY = {name: fam for fam, ms in FAMILIES.items() for name, _, _ in ms}
# x86 clocksources the vDSO reads in user space; with any other (hpet, acpi_pm, jiffies)
# clock_gettime is a system call, plus a device read for hpet and acpi_pm
VDSO_CLOCKSOURCES = ("tsc", "kvm-clock", "hyperv_clocksource_tsc_page")


def families_of(only: str) -> tuple[str, ...]:
    """`only` -> the families it names, in the kernel's order (pure); "all" names all but
    ioport (which the environment adds when it can). VirtbenchError for an unknown name."""
    if only == "all":
        return ALWAYS
    names = [w.strip() for w in only.split(",") if w.strip()]
    unknown = [w for w in names if w not in FAMILIES]
    if unknown or not names:
        raise VirtbenchError(f"benchmark primitives: only={only} names no family or an unknown "
                             f"one ({', '.join(unknown) or 'none given'}); use all or a "
                             f"comma-separated list of: {', '.join(FAMILY_NAMES)}")
    return tuple(f for f in FAMILY_NAMES if f in names)


class Primitives(Benchmark):
    name = "primitives"
    family = "primitives"
    description = ("price list of primitive operations (system call, clock read, page fault, "
                   "context switch, futex wake-up, timer lateness, dependent load, I/O port and "
                   "MMIO exits), each with its own calibrated loop; only=FAMILY,... picks some")
    metrics = tuple(Metric(name, unit, False, desc)
                    for fam in FAMILIES.values() for name, unit, desc in fam)
    tools = ("primitives",)
    # every family's section is stamped: a group of instances starts them together, one slot
    # per family (the figures are per operation: the group reports their mean)
    timed = tuple(m.name for m in metrics)
    slotted = True
    # processes: the CPUs the ctxsw family spreads its two processes over (2: the cross-CPU
    # figures; 1: same CPU only); an environment that pins our kernels reserves that many
    defaults = {"only": "all", "target_ms": 10.0, "repeats": 5, "timer_samples": 1000,
                "processes": 2}
    quick = {"target_ms": 2.0, "repeats": 3, "timer_samples": 200}

    def check(self, params):
        families_of(params["only"])
        if not 0 < params["target_ms"] <= 60_000:
            raise VirtbenchError("benchmark primitives: target_ms from above 0 to 60000 (each "
                                 "timed loop lasts at least this long)")
        if not 1 <= params["repeats"] <= 50:
            raise VirtbenchError("benchmark primitives: repeats from 1 to 50")
        if not 1 <= params["timer_samples"] <= 1_000_000:
            raise VirtbenchError("benchmark primitives: timer_samples from 1 to 1000000")
        if params["processes"] not in (1, 2):
            raise VirtbenchError("benchmark primitives: processes=1 (same CPU only) or 2 "
                                 "(also the cross-CPU figures)")

    def requirements(self, params):
        """ioport named explicitly is a need; with only=all it is added where offered."""
        if params["only"] != "all" and "ioport" in families_of(params["only"]):
            return self.needs + ("guest_root_io",)
        return self.needs

    def run_families(self, params, env) -> tuple[str, ...]:
        chosen = families_of(params["only"])
        if params["only"] == "all" and env.capabilities().guest_root_io:
            chosen = chosen + ("ioport",)
        return chosen

    def argv(self, params, env):
        return [env.kernel_path("primitives"), "--only", ",".join(self.run_families(params, env)),
                "--cpus", str(params["processes"]), "--target-ms", f"{params['target_ms']:g}",
                "--repeats", str(params["repeats"]),
                "--timer-samples", str(params["timer_samples"])]

    def timeout(self, params):
        # calibrated loops are bounded by time; what is not: the timer's sleeps, and building
        # a 4x-LLC random cycle under TCG
        return 1800.0 + params["timer_samples"] * 0.01

    def slots_needed(self, params):
        return len(FAMILY_NAMES) if params["only"] == "all" else len(families_of(params["only"]))

    def parse(self, stdout):
        result = kernel_result(stdout, "primitives")
        results = result.get("results")
        if not isinstance(results, dict):
            raise ParseError("no results in the primitives line")
        values = {}
        for name, entry in results.items():
            if name in METRIC_FAMILY and isinstance(entry, dict):
                values[name] = number(entry, "value")
        failed = result.get("failed") or {}
        if failed:
            what = "; ".join(f"{k}: {v}" for k, v in failed.items())
            raise ParseError(f"primitives failed: {what}", values)
        if not values:
            raise ParseError("no primitive was measured")
        return values

    def timing(self, stdout):
        """Each family's section, for its metrics: one block each."""
        try:
            result = kernel_result(stdout, "primitives")
            sections = result.get("sections")
            if not isinstance(sections, dict):
                return None
            spans = {}
            for name, fam in METRIC_FAMILY.items():
                pair = sections.get(fam)
                if isinstance(pair, list) and len(pair) == 2:
                    start, end = float(pair[0]), float(pair[1])
                    if end >= start:
                        spans[name] = [Span(start, end, 0.0)]
            return Timing(spans, late_of(result), late_of(result, "slot_late_s"))
        except (ParseError, TypeError, ValueError):
            return None

    def extra_warnings(self, text):
        """Why a metric is missing (one CPU, no huge pages granted), a clock read that is a
        system call (a clocksource the vDSO cannot read), and loops that hit their cap before
        lasting the target."""
        result = kernel_result(text, "primitives")
        out = []
        for name, why in sorted((result.get("skipped") or {}).items()):
            out.append(("primitives-skipped", f"{name}: {why}"))
        source = result.get("clocksource")
        if "clock_gettime_ns" in (result.get("results") or {}) and source and \
                source not in VDSO_CLOCKSOURCES:
            out.append(("primitives-clocksource", f"clocksource {source}: clock_gettime is a "
                        "system call here (the vDSO reads only tsc-based clocksources), "
                        f"{'plus a read of the device' if source in ('hpet', 'acpi_pm') else ''}"
                        .rstrip(", ")))
        short = sorted(name for name, entry in (result.get("results") or {}).items()
                       if isinstance(entry, dict) and entry.get("short") is True)
        if short:
            out.append(("primitives-short-loop", "loops shorter than target_ms (their cap was "
                        f"reached): {', '.join(short)}"))
        return out
