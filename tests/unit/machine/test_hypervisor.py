"""What a machine runs on, detected from real output: captured here (our own guests, this
machine) or published (Xen, VMware, VirtualBox: sources in each fixture's header)."""
import pytest

from virtbench.machine import fingerprint, hypervisor


def detect(fixture_text, name):
    return hypervisor.detect(fingerprint.split_sections(fixture_text("hypervisor", name)))


@pytest.mark.parametrize("name, label", [
    ("tcg-guest-q35.txt", "qemu"),            # QEMU's DMI, no KVM CPUID leaf: emulated
    ("tcg-guest-pc.txt", "qemu"),
    ("dev-machine-container.txt", "docker"),  # a container first, whatever runs beneath
    ("xen-pv-ec2.txt", "xen-pv"),             # no DMI at all, only the kernel's boot line
    ("xen-pvhvm-ec2.txt", "xen-hvm"),
    ("xen-hvm-imvirt.txt", "xen-hvm"),
    ("vmware.txt", "vmware"),
    ("virtualbox.txt", "virtualbox"),
    ("virtualbox-host-dmi.txt", "virtualbox"),  # systemd-detect-virt said kvm
])
def test_platform_of_real_outputs(fixture_text, name, label):
    assert detect(fixture_text, name).label == label


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
    assert fingerprint.parse(fixture_text("fingerprint", "native-debian12.txt"))[
        "virtualization"] == "docker"


def test_dmi_fields_skip_unreadable_ones():
    assert hypervisor.parse_dmi_fields(
        "sys_vendor: QEMU\nboard_vendor: cat: /x: No such file or directory\n") == {
        "sys_vendor": "QEMU"}
