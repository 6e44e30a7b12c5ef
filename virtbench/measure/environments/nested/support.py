"""Can this host nest guests, and how the nested kind's two layers are therefore run (pure
functions of what the host shows, and one reader of it).

Hardware nesting needs three things of the host: a CPU with the extensions (`svm`, AMD-V, or
`vmx`, Intel VT-x, in /proc/cpuinfo's flags), a usable KVM (the KVM probe boots a guest
kernel), and the KVM module's `nested` parameter on (/sys/module/kvm_amd/parameters/nested,
or kvm_intel's: "1" or "Y"). With all three, the outer guest runs under KVM with `-cpu host`
and passes the extensions on; the inner runs under KVM inside it.

Without a usable KVM, the outer runs under TCG with emulated AMD-V (`-cpu EPYC,+svm`: TCG
emulates SVM and nested paging, never Intel VMX), and the inner runs under KVM inside it
(kvm_amd in the outer guest). That is this machine: its /dev/kvm is PVM's, which cannot run
ordinary guests. With KVM but no nesting (`nested` off, or no flag), the outer runs under KVM
without the extensions and the inner can only be TCG: the label says so (`nested-kvm+tcg`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

TCG_OUTER_CPU = "EPYC,+svm"      # what TCG can emulate of a CPU that hosts guests
MODULES = {"svm": "kvm_amd", "vmx": "kvm_intel"}


@dataclass(frozen=True)
class HostNesting:
    """What this host shows of hardware nesting."""

    flag: str | None           # "svm", "vmx", or None (no extension in the CPU flags)
    module: str | None         # kvm_amd / kvm_intel, the module the flag needs
    nested: str | None         # its `nested` parameter as read ("1", "Y", "0", "N"), None when
                               # the module is not loaded
    loaded: tuple[str, ...] = ()    # the kvm modules loaded (kvm_pvm, say)

    @property
    def possible(self) -> bool:
        return self.flag is not None and self.nested in ("1", "Y", "y")

    @property
    def reason(self) -> str:
        """Why hardware nesting is possible or not, in one line naming the fix."""
        if self.flag is None:
            other = [m for m in self.loaded if m not in ("kvm", "kvm_amd", "kvm_intel")]
            return ("the CPU shows neither svm nor vmx in /proc/cpuinfo (not exposed to this "
                    "machine" + (f"; KVM here is {', '.join(other)}" if other else "") + ")")
        param = f"/sys/module/{self.module}/parameters/nested"
        if self.nested is None:
            return f"{self.module} is not loaded ({param} is absent); modprobe {self.module}"
        if not self.possible:
            return (f"{param} is {self.nested}; reload it with nested=1 "
                    f"(modprobe -r {self.module}; modprobe {self.module} nested=1)")
        return f"{self.flag} in the CPU flags and {param} is {self.nested}"


def cpu_flags(cpuinfo: str) -> set[str]:
    """The first CPU's flags in /proc/cpuinfo's text."""
    m = re.search(r"^flags\s*:(.*)$", cpuinfo, re.M)
    return set(m.group(1).split()) if m else set()


def host_nesting(cpuinfo: str, params: dict[str, str | None],
                 loaded: tuple[str, ...] = ()) -> HostNesting:
    """HostNesting from /proc/cpuinfo and the `nested` parameters read ({module: value or
    None when the module is absent}). Pure."""
    flags = cpu_flags(cpuinfo)
    flag = "svm" if "svm" in flags else "vmx" if "vmx" in flags else None
    module = MODULES.get(flag) if flag else None
    nested = params.get(module) if module else None
    return HostNesting(flag, module, nested.strip() if nested is not None else None,
                       tuple(loaded))


def read_host_nesting(root: Path = Path("/")) -> HostNesting:
    """This host's HostNesting (reads /proc/cpuinfo and /sys/module)."""
    try:
        cpuinfo = (root / "proc/cpuinfo").read_text(errors="replace")
    except OSError:
        cpuinfo = ""
    params: dict[str, str | None] = {}
    for module in MODULES.values():
        try:
            params[module] = (root / f"sys/module/{module}/parameters/nested").read_text()
        except OSError:
            params[module] = None
    try:
        loaded = tuple(sorted(p.name for p in (root / "sys/module").iterdir()
                              if p.name == "kvm" or p.name.startswith("kvm_")))
    except OSError:
        loaded = ()
    return host_nesting(cpuinfo, params, loaded)


@dataclass(frozen=True)
class Layers:
    """How the two layers run: each accelerator and the outer's CPU model, and why."""

    outer_accel: str
    outer_cpu: str
    inner_accel: str
    outer_reason: str
    inner_reason: str

    @property
    def name(self) -> str:
        """Both accelerators, outer first: tcg+kvm."""
        return f"{self.outer_accel}+{self.inner_accel}"


class Refused(ValueError):
    """A combination of options this host cannot run (its message names the fix)."""


def extensions_exposed(outer_accel: str, outer_cpu: str, host: HostNesting) -> tuple[bool, str]:
    """Does the outer guest see svm or vmx, and why (not)?"""
    if outer_accel == "tcg":
        if outer_cpu == "max" or "+svm" in outer_cpu.replace(" ", ""):
            return True, f"TCG emulates AMD-V for -cpu {outer_cpu}"
        return False, (f"-cpu {outer_cpu} under TCG has no +svm (TCG emulates AMD-V only, "
                       f"never VMX); drop outer_cpu= or use {TCG_OUTER_CPU}")
    if outer_cpu != "host":
        return False, (f"-cpu {outer_cpu} under KVM: only -cpu host passes the host's "
                       f"extensions on; drop outer_cpu=")
    if host.possible:
        return True, f"-cpu host under KVM with nesting: {host.reason}"
    return False, f"no hardware nesting here: {host.reason}"


def plan(outer_accel: str, outer_cpu: str, inner_accel: str, kvm_usable: bool,
         kvm_reason: str, host: HostNesting) -> Layers:
    """The layers for these options (auto|kvm|tcg, auto|model, auto|kvm|tcg) on a host whose
    KVM is `kvm_usable` and whose nesting is `host`. Pure; Refused names the fix."""
    if outer_accel == "kvm" and not kvm_usable:
        raise Refused(f"outer_accel=kvm is not usable here ({kvm_reason}); "
                      "use outer_accel=tcg or auto")
    if outer_accel == "auto":
        outer = "kvm" if kvm_usable else "tcg"
        outer_reason = kvm_reason if kvm_usable else f"TCG, not KVM: {kvm_reason}"
    else:
        outer, outer_reason = outer_accel, f"requested (outer_accel={outer_accel})"
    cpu = outer_cpu if outer_cpu != "auto" else ("host" if outer == "kvm" else TCG_OUTER_CPU)
    exposed, why = extensions_exposed(outer, cpu, host)
    if inner_accel == "kvm" and not exposed:
        raise Refused(f"accel=kvm needs the virtualization extensions in the outer guest: "
                      f"{why}; use accel=tcg or auto")
    if inner_accel == "auto":
        inner = "kvm" if exposed else "tcg"
        inner_reason = (f"KVM in the outer guest expected: {why}" if exposed
                        else f"TCG in the outer guest: {why}")
    else:
        inner, inner_reason = inner_accel, f"requested (accel={inner_accel}); {why}"
    return Layers(outer, cpu, inner, outer_reason, inner_reason)


def summary(layers: Layers, host: HostNesting) -> str:
    """One line for `virtbench envs`: how nested runs here, and why (pure)."""
    return (f"nested-{layers.name}: outer guest under {layers.outer_accel.upper()} "
            f"(-cpu {layers.outer_cpu}; {layers.outer_reason}), inner guest under "
            f"{layers.inner_accel.upper()} ({layers.inner_reason}); hardware nesting on this "
            f"host: {'yes' if host.possible else 'no'}, {host.reason}")
