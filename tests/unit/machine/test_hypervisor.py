"""What a machine runs on, detected from real output: captured here (our own guests, this
machine) or published (Xen, VMware, VirtualBox: sources in each fixture's header)."""
from pathlib import Path

import pytest

from virtbench.machinery.machine import fingerprint, hypervisor

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hypervisor"


def detect(fixture_text, name):
    return hypervisor.detect(fingerprint.split_sections(fixture_text("hypervisor", name)))


@pytest.mark.parametrize("name, label", [
    ("tcg-guest-q35.txt", "qemu"),            # QEMU's DMI, no KVM CPUID leaf: emulated
    ("tcg-guest-pc.txt", "qemu"),
    ("dev-machine-container.txt", "kvm"),     # the hypervisor under the container
    ("dev-machine-firecracker-docker.txt", "kvm"),
    ("xen-pv-ec2.txt", "xen-pv"),             # no DMI at all, only the kernel's boot line
    ("xen-pvhvm-ec2.txt", "xen-hvm"),
    ("xen-hvm-imvirt.txt", "xen-hvm"),
    ("vmware.txt", "vmware"),
    ("virtualbox.txt", "virtualbox"),
    ("virtualbox-host-dmi.txt", "virtualbox"),  # systemd-detect-virt said kvm
])
def test_platform_of_real_outputs(fixture_text, name, label):
    assert detect(fixture_text, name).label == label


# (fixture, hypervisor, its product, container, in words)
LAYERS = [
    # this machine, 2026-11-28: plain systemd-detect-virt says docker, --vm kvm; no DMI, the
    # ACPI tables' OEM ID is Firecracker's
    ("dev-machine-firecracker-docker.txt", "kvm", "Firecracker", "docker",
     "KVM guest (Firecracker) inside a docker container"),
    # the same machine on 2026-11-23, the script then asked systemd-detect-virt once: the
    # kernel's CPUID line still finds KVM under the container
    ("dev-machine-container.txt", "kvm", None, "docker", "KVM guest inside a docker container"),
    ("tcg-guest-q35.txt", "qemu", None, None, "QEMU guest (TCG, no KVM)"),
    ("xen-pv-ec2.txt", "xen-pv", None, None, "Xen PV guest"),
    ("vmware.txt", "vmware", None, None, "VMware guest"),
]


@pytest.mark.parametrize("name, hyper, product, container, words", LAYERS,
                         ids=[x[0] for x in LAYERS])
def test_both_layers_of_real_outputs(fixture_text, name, hyper, product, container, words):
    p = detect(fixture_text, name)
    assert (p.vm.label, p.vm.product, p.container and p.container.name) == (
        hyper, product, container)
    assert p.describe() == words


def test_this_machines_evidence_names_each_layers_own_signs(fixture_text):
    p = detect(fixture_text, "dev-machine-firecracker-docker.txt")
    assert p.vm.evidence == ("dmesg: Hypervisor detected: KVM", "systemd-detect-virt --vm kvm",
                             "ACPI OEM FIRECK")
    assert p.container.evidence == ("systemd-detect-virt --container docker",)
    s = fingerprint.split_sections(fixture_text("hypervisor",
                                                "dev-machine-firecracker-docker.txt"))
    assert hypervisor.parse_acpi_oem(s["dmesg_virt"]) == "FIRECK"
    # without systemd-detect-virt at all: /.dockerenv still names the container
    bare = {k: v for k, v in s.items() if not k.startswith("virt")}
    p = hypervisor.detect(bare)
    assert p.container.name == "docker" and p.container.evidence == ("/.dockerenv",)
    assert (p.vm.label, p.vm.product) == ("kvm", "Firecracker")


def test_the_acpi_oem_of_a_qemu_guest_is_bochs():
    # a TCG guest's dmesg, captured here (the fixture's header says how)
    lines = [ln for ln in (FIXTURES / "tcg-guest-q35-dmesg-acpi.txt").read_text().splitlines()
             if not ln.startswith("#")]
    [rsdp] = [ln for ln in lines if "ACPI: RSDP" in ln]
    assert hypervisor.parse_acpi_oem(rsdp) == "BOCHS"
    assert [hypervisor.parse_acpi_oem(ln) for ln in lines if "DMI:" in ln] == [None]
    assert hypervisor.parse_acpi_oem("[    0.0] DMI not present or invalid.") is None
    assert hypervisor.parse_acpi_oem("[    0.0] DMI not present or invalid.") is None


@pytest.mark.parametrize("facts, expected", [
    # stored before both layers were kept: a container leaves the hypervisor unknown
    ({"platform": "docker", "virtualization": "docker", "hypervisor_flag": True},
     (None, None, "docker")),
    ({"platform": "xen-pv", "virtualization": "xen"}, ("xen-pv", None, None)),
    ({"platform": "kvm", "hypervisor": "kvm", "hypervisor_product": "Firecracker",
      "container": "docker"}, ("kvm", "Firecracker", "docker")),
])
def test_layers_of_old_and_new_metadata(facts, expected):
    assert hypervisor.layers_of(facts) == expected


def test_xen_guest_type_wins_over_the_boot_line():
    s = {"xen": "type: xen\nguest_type: PVH\n",
         "dmesg_virt": "[    0.0] Booting paravirtualized kernel on Xen HVM\n"}
    p = hypervisor.detect(s)
    assert p.label == "xen-pvh" and "/sys/hypervisor/guest_type PVH" in p.evidence


def test_kvm_from_the_kernels_cpuid_line_and_bare_metal_without_signs():
    kvm = hypervisor.detect({"dmi_fields": "sys_vendor: QEMU\n",
                             "dmesg_virt": "[    0.000000] Hypervisor detected: KVM\n"})
    assert kvm.label == "kvm"
    bare = hypervisor.detect({"cpuinfo": "flags\t\t: fpu vme sse2\n", "virt": "none"})
    assert bare.label == "bare-metal"
    unknown = hypervisor.detect({"cpuinfo": "flags\t\t: fpu hypervisor sse2\n"})
    assert unknown.label == "vm"


def test_fingerprint_records_the_platform(fixture_text):
    facts = fingerprint.parse(fixture_text("hypervisor", "tcg-guest-q35.txt"))
    assert facts["platform"] == "qemu"
    assert "QEMU" in facts["platform_evidence"]
    assert facts["virtualization"] == "qemu"   # no systemd-detect-virt in the guest image
    assert facts["container"] is None and facts["hypervisor"] == "qemu"
    assert fingerprint.parse(fixture_text("fingerprint", "native-debian12.txt"))[
        "virtualization"] == "docker"


def test_fingerprint_keeps_both_layers_apart(fixture_text):
    facts = fingerprint.parse(fixture_text("hypervisor", "dev-machine-firecracker-docker.txt"))
    assert {k: facts[k] for k in ("platform", "hypervisor", "hypervisor_product", "container",
                                  "platform_description", "virtualization")} == {
        "platform": "kvm", "hypervisor": "kvm", "hypervisor_product": "Firecracker",
        "container": "docker",
        "platform_description": "KVM guest (Firecracker) inside a docker container",
        "virtualization": "docker"}           # systemd-detect-virt's own (innermost) word
    assert facts["hypervisor_evidence"].startswith("dmesg: Hypervisor detected: KVM")
    assert facts["container_evidence"] == "systemd-detect-virt --container docker"


def test_dmi_fields_skip_unreadable_ones():
    assert hypervisor.parse_dmi_fields(
        "sys_vendor: QEMU\nboard_vendor: cat: /x: No such file or directory\n") == {
        "sys_vendor": "QEMU"}
