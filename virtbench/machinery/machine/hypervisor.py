"""What a machine runs on, from what it can see of itself: two layers, each optional.

- the VM layer: the hypervisor (kvm, xen with its guest mode PV/HVM/PVH, vmware, virtualbox,
  hyperv, qemu without KVM, ...), and the product when something names it (Firecracker, QEMU,
  Cloud Hypervisor, Amazon EC2...); "bare-metal" when there is none;
- the container layer: docker, podman, lxc, systemd-nspawn... or none.

A container on a KVM guest is both: systemd-detect-virt alone answers with the innermost layer
only (its man page: "if both machine and container virtualization are used in conjunction,
only the latter will be identified (unless --vm is passed)"), so the fingerprint script asks
it three times (`virt`, `virt_vm`: --vm, `virt_container`: --container).

Pure: `detect(evidence)` reads the sections the fingerprint script prints (those three;
`container_files`: /.dockerenv, /run/.containerenv, /run/systemd/container; `xen`:
/sys/hypervisor/type and guest_type; `dmi_fields`: the DMI vendor and product strings;
`dmesg_virt`: the kernel's own boot lines about its platform, its ACPI RSDP line included;
`cpuinfo`'s hypervisor flag) and weighs them the way systemd-detect-virt and virt-what do:
Xen first (a Xen guest may also show another hypervisor's CPUID), then the DMI vendor tables,
then the kernel's CPUID-based "Hypervisor detected" line. No single source is always there:
systemd-detect-virt is missing from small images, DMI from Xen PV guests and Firecracker,
dmesg from unprivileged users.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

CONTAINERS = {"docker", "podman", "lxc", "lxc-libvirt", "systemd-nspawn", "openvz", "rkt",
              "wsl", "proot", "pouch"}
# systemd-detect-virt's VM identifiers -> (ours, the product it names)
DETECT_VIRT = {"kvm": ("kvm", None), "qemu": ("qemu", None), "xen": ("xen", None),
               "oracle": ("virtualbox", None), "vmware": ("vmware", None),
               "microsoft": ("hyperv", None), "parallels": ("parallels", None),
               "bochs": ("bochs", None), "amazon": ("kvm", "Amazon EC2"),
               "google": ("kvm", "Google Compute Engine"), "bhyve": ("bhyve", None),
               "acrn": ("acrn", None), "zvm": ("zvm", None), "powervm": ("powervm", None),
               "qnx": ("qnx", None), "apple": ("apple", None), "uml": ("uml", None)}
XEN_MODES = {"pv": "pv", "hvm": "hvm", "pvh": "pvh"}
# the OEM ID of the ACPI tables a VMM writes (the kernel's "ACPI: RSDP ... (v02 FIRECK)")
ACPI_OEM = {"FIRECK": "Firecracker", "CLOUDH": "Cloud Hypervisor", "BOCHS": "QEMU",
            "CROSVM": "crosvm"}
# DMI sys_vendor -> product, for the VMMs that name themselves there
DMI_PRODUCT = {"QEMU": "QEMU", "Amazon EC2": "Amazon EC2", "Google": "Google Compute Engine",
               "Cloud Hypervisor": "Cloud Hypervisor"}
# how a report says each hypervisor
WORDS = {"kvm": "KVM", "qemu": "QEMU (TCG, no KVM)", "xen": "Xen", "vmware": "VMware",
         "virtualbox": "VirtualBox", "hyperv": "Hyper-V", "parallels": "Parallels",
         "bochs": "Bochs", "bhyve": "bhyve", "acrn": "ACRN", "zvm": "z/VM",
         "powervm": "PowerVM", "qnx": "QNX", "apple": "Apple Virtualization", "uml": "UML",
         "vm": "an unknown hypervisor"}
BARE = "bare-metal"


@dataclass(frozen=True)
class Layer:
    name: str                   # VM: bare-metal, kvm, qemu (TCG), xen, vmware, virtualbox,
                                # hyperv, ... or "vm" (a guest of unknown kind); container: docker...
    mode: str | None = None     # Xen: pv, hvm or pvh
    product: str | None = None  # Firecracker, QEMU, Cloud Hypervisor, Amazon EC2... when named
    evidence: tuple[str, ...] = field(default=())

    @property
    def label(self) -> str:
        """The label part: xen-pv, vmware, kvm, bare-metal, docker..."""
        return f"{self.name}-{self.mode}" if self.mode else self.name


@dataclass(frozen=True)
class Platform:
    """Both layers: `vm` always (bare-metal when none), `container` when there is one."""
    vm: Layer
    container: Layer | None = None

    @property
    def name(self) -> str:
        return self.vm.name if self.vm.name != BARE or self.container is None \
            else self.container.name

    @property
    def mode(self) -> str | None:
        return self.vm.mode

    @property
    def label(self) -> str:
        """One word for an environment's label: the hypervisor's (xen-pv, kvm), the
        container's on bare metal (docker), else bare-metal."""
        return self.vm.label if self.vm.name != BARE or self.container is None \
            else self.container.label

    @property
    def evidence(self) -> tuple[str, ...]:
        return self.vm.evidence + (self.container.evidence if self.container else ())

    def describe(self) -> str:
        """In words: "KVM guest (Firecracker) inside a docker container", "bare metal"."""
        return describe(self.vm.label, self.vm.product,
                        self.container.name if self.container else None)

    def to_json(self) -> dict:
        return {"name": self.name, "mode": self.mode, "label": self.label,
                "evidence": list(self.evidence), "hypervisor": self.vm.label,
                "product": self.vm.product, "container": self.container and self.container.name,
                "description": self.describe()}


def hypervisor_words(label: str, product: str | None = None) -> str:
    """"KVM (Firecracker)", "Xen PV", "an unknown hypervisor"."""
    name, _, mode = label.partition("-")
    words = WORDS.get(name, name)
    if mode:
        words += f" {mode.upper()}"
    return f"{words} ({product})" if product and product not in words else words


def describe(hypervisor: str, product: str | None, container: str | None) -> str:
    """Both layers in words, from the facts a fingerprint stores."""
    inside = f" inside a {container} container" if container else ""
    if hypervisor in (BARE, "", None):
        return f"a {container} container on bare metal" if container else "bare metal"
    if hypervisor == "vm":
        return f"a guest of an unknown hypervisor (CPUID hypervisor flag){inside}"
    name, _, mode = hypervisor.partition("-")
    words = WORDS.get(name, name) + (f" {mode.upper()}" if mode else "")
    if name == "qemu":
        words = "QEMU"
        product = "TCG, no KVM"
    return f"{words} guest" + (f" ({product})" if product else "") + inside


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


def parse_acpi_oem(dmesg: str) -> str | None:
    """The OEM ID of the kernel's "ACPI: RSDP 0x... 000024 (v02 FIRECK)" line, or None."""
    m = re.search(r"ACPI: RSDP 0x[0-9A-Fa-f]+ [0-9A-Fa-f]+ \(v\d+ ([^)]*)\)", dmesg)
    return m.group(1).strip() or None if m else None


def first_word(text: str | None) -> str:
    """systemd-detect-virt's answer: its first line, "" when absent; "none" stays "none"."""
    lines = (text or "").strip().splitlines()
    return lines[0].strip() if lines else ""


def _xen_mode(guest_type: str | None, dmesg: str, dmi: dict) -> tuple[str | None, str]:
    if guest_type and guest_type.lower() in XEN_MODES:
        return XEN_MODES[guest_type.lower()], f"/sys/hypervisor/guest_type {guest_type}"
    m = re.search(r"Booting paravirtualized kernel on Xen(?: (HVM|PVH))?\s*$", dmesg, re.M)
    if m:
        return (m.group(1) or "PV").lower(), f"dmesg: {m.group(0).strip()}"
    if "HVM domU" in dmi.get("product_name", ""):
        return "hvm", "DMI product HVM domU"
    return None, ""


def detect_container(sections: dict[str, str]) -> Layer | None:
    """The container layer: systemd-detect-virt (--container, or plain when it names a
    container), else the files container managers leave (/.dockerenv, /run/.containerenv)."""
    for key, how in (("virt_container", "systemd-detect-virt --container"),
                     ("virt", "systemd-detect-virt")):
        word = first_word(sections.get(key))
        if word in CONTAINERS:
            return Layer(word, evidence=(f"{how} {word}",))
        if word and word != "none" and key == "virt_container":
            return Layer(word, evidence=(f"{how} {word}",))
    files = (sections.get("container_files") or "").splitlines()
    for line in files:
        line = line.strip()
        if line == "/.dockerenv":
            return Layer("docker", evidence=("/.dockerenv",))
        if line == "/run/.containerenv":
            return Layer("podman", evidence=("/run/.containerenv",))
        key, _, value = line.partition(": ")
        if key == "/run/systemd/container" and value.strip():
            return Layer(value.strip(), evidence=(f"/run/systemd/container {value.strip()}",))
    return None


def _product(dmi: dict, acpi_oem: str | None) -> tuple[str | None, str | None]:
    """The VMM's product, from the ACPI OEM ID or the DMI vendor, and why."""
    if acpi_oem in ACPI_OEM:
        return ACPI_OEM[acpi_oem], f"ACPI OEM {acpi_oem}"
    vendor = dmi.get("sys_vendor", "")
    if vendor in DMI_PRODUCT:
        return DMI_PRODUCT[vendor], f"DMI {vendor}"
    return None, None


def detect_vm(sections: dict[str, str]) -> Layer:
    """The VM layer (see the module docstring); bare-metal when nothing says there is one."""
    asked = "systemd-detect-virt --vm" if first_word(sections.get("virt_vm")) else \
        "systemd-detect-virt"
    virt = first_word(sections.get("virt_vm")) or first_word(sections.get("virt"))
    if virt in CONTAINERS:           # plain systemd-detect-virt names the innermost layer
        virt = ""
    xen_type, guest_type = parse_xen(sections.get("xen", ""))
    dmi = parse_dmi_fields(sections.get("dmi_fields", ""))
    dmesg = sections.get("dmesg_virt", "")
    flag = re.search(r"^flags\s*:.*\bhypervisor\b", sections.get("cpuinfo", ""), re.M)
    vendors = " ".join(dmi.get(k, "") for k in ("sys_vendor", "bios_vendor", "board_vendor"))
    product = dmi.get("product_name", "")
    cpuid = re.search(r"Hypervisor detected: (.+)$", dmesg, re.M)
    cpuid = cpuid.group(1).strip() if cpuid else ""
    oem = parse_acpi_oem(dmesg)

    if (xen_type == "xen" or virt == "xen" or "Xen" in dmi.get("sys_vendor", "")
            or re.search(r"Booting paravirtualized kernel on Xen", dmesg)):
        mode, why = _xen_mode(guest_type, dmesg, dmi)
        seen = [s for s in (xen_type == "xen" and "/sys/hypervisor/type xen",
                            virt == "xen" and "systemd-detect-virt xen", why) if s]
        return Layer("xen", mode, None, tuple(seen))
    if "innotek GmbH" in vendors or product == "VirtualBox" or dmi.get(
            "board_vendor") == "Oracle Corporation" or virt == "oracle":
        return Layer("virtualbox", None, None, (f"DMI {vendors.strip() or product}",))
    if "VMware" in vendors or product.startswith("VMware") or virt == "vmware" or cpuid == "VMware":
        return Layer("vmware", None, None, (f"DMI {product or vendors.strip()}",) if product
                     else (f"dmesg: Hypervisor detected: {cpuid}",))
    if (dmi.get("sys_vendor") == "Microsoft Corporation" and product == "Virtual Machine") \
            or virt == "microsoft" or cpuid == "Microsoft Hyper-V":
        return Layer("hyperv", None, None, (f"DMI {vendors.strip()} {product}",))
    if cpuid == "KVM" or virt in ("kvm", "amazon", "google"):
        seen = ["dmesg: Hypervisor detected: KVM"] if cpuid == "KVM" else []
        if virt:
            seen.append(f"{asked} {virt}")
        name, named = DETECT_VIRT[virt] if virt in DETECT_VIRT else ("kvm", None)
        made, why = _product(dmi, oem)
        if why:
            seen.append(why)
        return Layer(name, None, made or named, tuple(seen))
    if "QEMU" in vendors or virt == "qemu" or oem == "BOCHS":
        # QEMU's DMI without KVM's CPUID leaf: emulation (TCG)
        why = f"DMI {vendors.strip()} {product}".strip() if "QEMU" in vendors else \
            f"{asked} {virt}" if virt else "ACPI OEM BOCHS"
        return Layer("qemu", None, None, (why,))
    if virt in DETECT_VIRT:
        name, named = DETECT_VIRT[virt]
        return Layer(name, None, named, (f"{asked} {virt}",))
    if flag or cpuid or (virt and virt != "none"):
        made, why = _product(dmi, oem)
        return Layer("vm", None, made, ("CPUID hypervisor flag",) + ((why,) if why else ()))
    return Layer(BARE, None, None, ("no hypervisor flag, DMI or systemd-detect-virt sign",))


def detect(sections: dict[str, str]) -> Platform:
    """Both layers from the fingerprint script's sections (see the module docstring)."""
    return Platform(detect_vm(sections), detect_container(sections))


def layers_of(metadata: dict) -> tuple[str | None, str | None, str | None]:
    """(hypervisor label, its product, container) from a stored fingerprint, old or new.

    Runs stored before both layers were kept have `platform` (the container when there was
    one, else the hypervisor) and `virtualization` (systemd-detect-virt's innermost word): a
    container there leaves the hypervisor unknown (None), never "bare-metal"."""
    if "hypervisor" in metadata or "container" in metadata:
        return metadata.get("hypervisor"), metadata.get("hypervisor_product"), \
            metadata.get("container")
    platform = metadata.get("platform") or metadata.get("virtualization")
    if platform in CONTAINERS:
        return None, None, platform
    if metadata.get("virtualization") in CONTAINERS:
        return platform, None, metadata["virtualization"]
    return platform, None, None
