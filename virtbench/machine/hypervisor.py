"""What a machine runs on, from what it can see of itself: the hypervisor (or container) and,
for Xen, the guest mode (PV, HVM, PVH).

Pure: `detect(evidence)` reads the sections the fingerprint script prints (`virt`: the output
of systemd-detect-virt; `xen`: /sys/hypervisor/type and guest_type; `dmi_fields`: the DMI
vendor and product strings; `dmesg_virt`: the kernel's own boot lines about its platform;
`cpuinfo`'s hypervisor flag) and weighs them the way systemd-detect-virt and virt-what do:
Xen first (a Xen guest may also show another hypervisor's CPUID), then the DMI vendor tables,
then the kernel's CPUID-based "Hypervisor detected" line. No single source is always there:
systemd-detect-virt is missing from small images, DMI from Xen PV guests, dmesg from
unprivileged users.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

CONTAINERS = {"docker", "podman", "lxc", "lxc-libvirt", "systemd-nspawn", "openvz", "rkt",
              "wsl", "proot", "pouch"}
# systemd-detect-virt's identifiers -> ours
DETECT_VIRT = {"kvm": "kvm", "qemu": "qemu", "xen": "xen", "oracle": "virtualbox",
               "vmware": "vmware", "microsoft": "hyperv", "parallels": "parallels",
               "bochs": "bochs", "amazon": "kvm"}
XEN_MODES = {"pv": "pv", "hvm": "hvm", "pvh": "pvh"}


@dataclass(frozen=True)
class Platform:
    name: str                   # bare-metal, kvm, qemu (no KVM: TCG), xen, vmware, virtualbox,
                                # hyperv, a container name, or "vm" (a guest of unknown kind)
    mode: str | None = None     # Xen: pv, hvm or pvh
    evidence: tuple[str, ...] = field(default=())

    @property
    def label(self) -> str:
        """The label part: xen-pv, vmware, kvm, bare-metal..."""
        return f"{self.name}-{self.mode}" if self.mode else self.name

    def to_json(self) -> dict:
        return {"name": self.name, "mode": self.mode, "label": self.label,
                "evidence": list(self.evidence)}


def parse_dmi_fields(text: str) -> dict[str, str]:
    """`key: value` lines (sys_vendor: QEMU) -> dict, unreadable fields left out."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        value = value.strip()
        if sep and re.fullmatch(r"[a-z_]+", key.strip()) and value and "No such file" not in value:
            out[key.strip()] = value
    return out


def parse_xen(text: str) -> tuple[str | None, str | None]:
    """`type: xen` / `guest_type: PV` lines -> (type, guest_type), None where absent."""
    fields = parse_dmi_fields(text)
    return fields.get("type"), fields.get("guest_type")


def _xen_mode(guest_type: str | None, dmesg: str, dmi: dict) -> tuple[str | None, str]:
    if guest_type and guest_type.lower() in XEN_MODES:
        return XEN_MODES[guest_type.lower()], f"/sys/hypervisor/guest_type {guest_type}"
    m = re.search(r"Booting paravirtualized kernel on Xen(?: (HVM|PVH))?\s*$", dmesg, re.M)
    if m:
        return (m.group(1) or "PV").lower(), f"dmesg: {m.group(0).strip()}"
    if "HVM domU" in dmi.get("product_name", ""):
        return "hvm", "DMI product HVM domU"
    return None, ""


def detect(sections: dict[str, str]) -> Platform:
    """The platform from the fingerprint script's sections (see the module docstring)."""
    virt = (sections.get("virt") or "").strip().splitlines()
    virt = virt[0].strip() if virt else ""
    xen_type, guest_type = parse_xen(sections.get("xen", ""))
    dmi = parse_dmi_fields(sections.get("dmi_fields", ""))
    dmesg = sections.get("dmesg_virt", "")
    flag = re.search(r"^flags\s*:.*\bhypervisor\b", sections.get("cpuinfo", ""), re.M)
    vendors = " ".join(dmi.get(k, "") for k in ("sys_vendor", "bios_vendor", "board_vendor"))
    product = dmi.get("product_name", "")
    cpuid = re.search(r"Hypervisor detected: (.+)$", dmesg, re.M)
    cpuid = cpuid.group(1).strip() if cpuid else ""

    if virt in CONTAINERS:
        return Platform(virt, None, (f"systemd-detect-virt {virt}",))
    if (xen_type == "xen" or virt == "xen" or "Xen" in dmi.get("sys_vendor", "")
            or re.search(r"Booting paravirtualized kernel on Xen", dmesg)):
        mode, why = _xen_mode(guest_type, dmesg, dmi)
        seen = [s for s in (xen_type == "xen" and "/sys/hypervisor/type xen",
                            virt == "xen" and "systemd-detect-virt xen", why) if s]
        return Platform("xen", mode, tuple(seen))
    if "innotek GmbH" in vendors or product == "VirtualBox" or dmi.get(
            "board_vendor") == "Oracle Corporation" or virt == "oracle":
        return Platform("virtualbox", None, (f"DMI {vendors.strip() or product}",))
    if "VMware" in vendors or product.startswith("VMware") or virt == "vmware" or cpuid == "VMware":
        return Platform("vmware", None, (f"DMI {product or vendors.strip()}",) if product
                        else (f"dmesg: Hypervisor detected: {cpuid}",))
    if (dmi.get("sys_vendor") == "Microsoft Corporation" and product == "Virtual Machine") \
            or virt == "microsoft" or cpuid == "Microsoft Hyper-V":
        return Platform("hyperv", None, (f"DMI {vendors.strip()} {product}",))
    if cpuid == "KVM" or virt in ("kvm", "amazon"):
        return Platform("kvm", None, ("dmesg: Hypervisor detected: KVM" if cpuid == "KVM"
                                      else f"systemd-detect-virt {virt}",))
    if "QEMU" in vendors or virt == "qemu":
        # QEMU's DMI without KVM's CPUID leaf: emulation (TCG)
        return Platform("qemu", None, (f"DMI {vendors.strip()} {product}".strip(),))
    if virt in DETECT_VIRT:
        return Platform(DETECT_VIRT[virt], None, (f"systemd-detect-virt {virt}",))
    if flag or cpuid or (virt and virt != "none"):
        return Platform("vm", None, ("CPUID hypervisor flag",))
    return Platform("bare-metal", None, ("no hypervisor flag, DMI or systemd-detect-virt sign",))
