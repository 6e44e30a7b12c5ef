"""The baseline_virtualized warning names the hypervisor and, apart, the container."""
import pytest

from virtbench.results.analysis.row_warnings import baseline_layers
from virtbench.machinery.machine import fingerprint


def test_this_machine_names_kvm_firecracker_and_docker(fixture_text):
    md = fingerprint.parse(fixture_text("hypervisor", "dev-machine-firecracker-docker.txt"))
    assert baseline_layers(md) == "KVM (Firecracker), inside a docker container"


@pytest.mark.parametrize("md, words", [
    # a run stored before both layers were kept (this machine, 2026-11-23): the container only
    ({"platform": "docker", "virtualization": "docker", "hypervisor_flag": True},
     "one this run did not record (CPUID hypervisor bit set), inside a docker container"),
    ({"platform": "xen-pv", "virtualization": "xen", "hypervisor_flag": True}, "Xen PV"),
    ({"hypervisor": "vm", "container": None, "hypervisor_flag": True}, "an unknown hypervisor"),
    ({"hypervisor": "bare-metal", "container": "docker", "hypervisor_flag": False}, None),
    ({"platform": "bare-metal", "virtualization": "none", "hypervisor_flag": False}, None),
])
def test_old_and_new_metadata(md, words):
    assert baseline_layers(md) == words
