"""Guest tunings of the `qemu` kind (and of libvirt domains virtbench defines): the options,
their checks, the kernel command line they add, the guest commands that apply them after
boot, and the comparison of what was asked with what the guest reports (pure).

Each default leaves the guest untouched (the kernel's own default or "auto"), so an
environment without tunings keeps its label and its command line. The read-back parsers
are in readback.py; the agent calls are Guest.apply_tunings (guest.py).

Debian's guest kernels are built at HZ=250 (every flavour): `tick` and `highres` are the
nearest stand-ins for the Zhang et al. 1000 Hz -> 100 Hz timer; see docs/tunings.md.
"""
from __future__ import annotations

from .....core.errors import VirtbenchError
from ...base import Option

CLOCKSOURCES = ("auto", "tsc", "kvm-clock", "hpet", "acpi_pm")
IOSCHEDS = ("auto", "none", "mq-deadline", "bfq", "kyber")
IOSCHED_MODULES = {"bfq": "bfq", "kyber": "kyber-iosched"}   # loadable in Debian's kernel
E1000_ITR_MODES = {0: "off", 1: "dynamic", 3: "dynamic conservative",
                   4: "simplified (2000-8000 ints/s)"}
E1000_ITR_RANGE = (100, 100000)     # e1000_param.c MIN_ITR, MAX_ITR


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError("write a whole number, or auto") from None


def _count(text: str) -> int | str:
    if text == "auto":
        return "auto"
    n = _int(text)
    if n < 0:
        raise ValueError("a count of microseconds, 0 or more")
    return n


def _e1000_itr(text: str) -> int | str:
    if text == "auto":
        return "auto"
    n = _int(text)
    lo, hi = E1000_ITR_RANGE
    if n not in E1000_ITR_MODES and not lo <= n <= hi:
        raise ValueError(f"e1000 takes 0 (off), 1 (dynamic), 3 (dynamic conservative, its "
                         f"default), 4 (simplified) or {lo}-{hi} interrupts/s")
    return n


TUNINGS: dict[str, Option] = {
    "tick": Option("dynamic", choices=("dynamic", "periodic"),
                   help="guest timer tick; periodic = nohz=off (a tick every 4 ms at the "
                        "guest kernel's 250 Hz, idle or not)"),
    "highres": Option("on", choices=("on", "off"),
                      help="guest high-resolution timers; off = highres=off (timers at tick "
                           "granularity)"),
    "clocksource": Option("auto", choices=CLOCKSOURCES,
                          help="guest clock source (clocksource=); auto = the kernel's choice"),
    "pmtimer": Option("on", choices=("on", "off"),
                      help="guest ACPI PM timer; off = pmtmr=0 (no acpi_pm clock source, no "
                           "PM-timer rate check at boot)"),
    "iosched": Option("auto", choices=IOSCHEDS,
                      help="guest I/O scheduler of the scratch disk (sysfs); auto = the "
                           "kernel's default"),
    "offloads": Option("on", choices=("on", "off"),
                       help="guest NIC offloads tso/gso/gro (ethtool -K); on = as the driver "
                            "sets them"),
    "nic_coalesce_us": Option("auto", convert=_count,
                              help="guest NIC interrupt coalescing, rx/tx usecs (ethtool -C; "
                                   "nic=virtio-net only)"),
    "e1000_itr": Option("auto", convert=_e1000_itr,
                        help="e1000 InterruptThrottleRate module parameter (nic=e1000 only)"),
    "napi_tx": Option("on", choices=("on", "off"),
                      help="virtio_net napi_tx module parameter (nic=virtio-net only)"),
}


def requested(values: dict) -> dict:
    """{tuning: wanted value} of the tunings that differ from their untouched default."""
    return {name: values[name] for name, opt in TUNINGS.items()
            if name in values and values[name] != opt.default}


def check_tunings(values: dict, kind: str = "qemu") -> None:
    """Combinations that cannot work, as one line naming the option and the fix."""
    want = requested(values)
    nic = values.get("nic")
    if "nic_coalesce_us" in want and nic != "virtio-net":
        raise VirtbenchError(f"environment {kind}: nic_coalesce_us works only with "
                             f"nic=virtio-net (ethtool -C), not nic={nic}"
                             + ("; for e1000 use e1000_itr=N" if nic == "e1000" else ""))
    if "e1000_itr" in want and nic != "e1000":
        raise VirtbenchError(f"environment {kind}: e1000_itr works only with nic=e1000 "
                             f"(an e1000 module parameter), not nic={nic}")
    if "napi_tx" in want and nic != "virtio-net":
        raise VirtbenchError(f"environment {kind}: napi_tx works only with nic=virtio-net "
                             f"(a virtio_net module parameter), not nic={nic}")
    if want.get("pmtimer") == "off" and values.get("clocksource") == "acpi_pm":
        raise VirtbenchError(f"environment {kind}: clocksource=acpi_pm needs the PM timer; "
                             "drop pmtimer=off or choose another clocksource")


def boot_args(values: dict) -> list[str]:
    """Kernel command-line words for the tunings applied at boot (module parameters
    included: the initramfs passes `module.param=value` words to insmod)."""
    want = requested(values)
    args = []
    if want.get("tick") == "periodic":
        args.append("nohz=off")
    if want.get("highres") == "off":
        args.append("highres=off")
    if "clocksource" in want:
        args.append(f"clocksource={want['clocksource']}")
    if want.get("pmtimer") == "off":
        args.append("pmtmr=0")
    if "e1000_itr" in want:
        args.append(f"e1000.InterruptThrottleRate={want['e1000_itr']}")
    if "napi_tx" in want:
        args.append(f"virtio_net.napi_tx={1 if want['napi_tx'] == 'on' else 0}")
    return args


def runtime_commands(values: dict, nic: str | None, block: str | None) -> dict[str, list[str]]:
    """{tuning: argv} of the tunings applied through the agent after boot, before the first
    trial. `nic`: the guest interface; `block`: the scratch disk's name under /sys/block."""
    want = requested(values)
    cmds: dict[str, list[str]] = {}
    if "iosched" in want and block:
        sched = want["iosched"]
        load = f"modprobe {IOSCHED_MODULES[sched]} && " if sched in IOSCHED_MODULES else ""
        cmds["iosched"] = ["sh", "-c", f'{load}echo {sched} > "/sys/block/$1/queue/scheduler"',
                           "sh", block]
    if "offloads" in want and nic:
        state = want["offloads"]
        cmds["offloads"] = ["ethtool", "-K", nic, "tso", state, "gso", state, "gro", state]
    if "nic_coalesce_us" in want and nic:
        us = str(want["nic_coalesce_us"])
        cmds["nic_coalesce_us"] = ["ethtool", "-C", nic, "rx-usecs", us, "tx-usecs", us]
    return cmds


def _e1000_itr_words(value) -> str:
    if value in (None, "auto"):
        return "no InterruptThrottleRate (the driver's default, 3: dynamic conservative)"
    return f"{value} ({E1000_ITR_MODES[value]})" if value in E1000_ITR_MODES else str(value)


def mismatches(want: dict, got: dict, extra: dict | None = None) -> list[str]:
    """One phrase per tuning whose read-back differs from what was asked:
    `clocksource=kvm-clock did not take: the guest reports tsc (available: tsc hpet acpi_pm)`.
    `got`: the read-back values (readback.read_all); `extra`: what more to say, by tuning
    (the error of the command that applied it, the available choices)."""
    extra = extra or {}
    out = []
    for name, value in want.items():
        have = got.get(name)
        if have == value:
            continue
        if name == "e1000_itr":
            seen = _e1000_itr_words(have)
        else:
            seen = "nothing" if have is None else str(have)
        more = f" ({extra[name]})" if extra.get(name) else ""
        out.append(f"{name}={value} did not take: the guest reports {seen}{more}")
    return out
