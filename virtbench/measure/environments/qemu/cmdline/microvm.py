"""machine=microvm under TCG: the guest kernel is told the TSC's rate.

microvm has no HPET and no ACPI PM timer, so a guest kernel can calibrate its TSC only
against the PIT; under TCG on a busy host that calibration fails often ("tsc: Unable to
calibrate against PIT ... No reference (HPET/PMTIMER) available"), the kernel marks the TSC
unstable and the boot stalls. Under TCG the guest's TSC is the host's (QEMU reads the host's
counter), so its rate is the host's: given as `tsc_early_khz=` (Linux >= 4.19) it skips the
calibration. The kernel's clocksource watchdog would still judge that TSC against jiffies,
which a TCG guest on a busy host loses (seen here: "Marking clocksource 'tsc-early' as
unstable because the skew is too large", then refined-jiffies, a clock that ran 15 % slow
over the boot): `tsc=reliable` keeps the TSC, the one clock that keeps the host's time.
Under KVM the guest has kvm-clock and needs nothing."""
from __future__ import annotations

import re
from pathlib import Path

from .....core.errors import EnvironmentUnusable


def parse_tsc_khz(cpuinfo: str) -> int | None:
    """/proc/cpuinfo -> the TSC's rate in kHz (the first CPU's "cpu MHz"), when its flags say
    the TSC runs at a constant rate (constant_tsc); else None (pure)."""
    flags = re.search(r"^flags\s*:\s*(.*)$", cpuinfo, re.M)
    mhz = re.search(r"^cpu MHz\s*:\s*([0-9.]+)$", cpuinfo, re.M)
    if not flags or not mhz or "constant_tsc" not in flags.group(1).split():
        return None
    return round(float(mhz.group(1)) * 1000)


def boot_args(machine: str, accel: str | None, cpuinfo: Path = Path("/proc/cpuinfo")) -> list[str]:
    """The words a microvm guest under TCG needs on its command line (none otherwise)."""
    if machine != "microvm" or accel != "tcg":
        return []
    khz = parse_tsc_khz(cpuinfo.read_text())
    if khz is None:
        raise EnvironmentUnusable("machine=microvm under TCG needs a host whose TSC runs at a "
                                  "constant rate (constant_tsc in /proc/cpuinfo): microvm has "
                                  "no other clock a guest can calibrate against; use "
                                  "machine=q35 or pc")
    return [f"tsc_early_khz={khz}", "tsc=reliable"]
