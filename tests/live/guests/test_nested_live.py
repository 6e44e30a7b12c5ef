"""The live part of tests/unit/environments/test_nested.py: its tests that need a guest.

The nested kind without booting anything: can this host nest (real /proc/cpuinfo of this
machine, of the outer guest and of a published Intel host), each layer's accelerator, the
label, the capabilities, the options, the program inside's report and its relay (a real
agent over real sockets), and the life cycle with a stand-in outer guest.

The live test (an outer guest under TCG, KVM inside it) is tests/live/nested/test_nested_env.py.
"""
from __future__ import annotations
from pathlib import Path
import pytest
from virtbench.measure.environments.nested import support

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "nested"

THIS_HOST = (FIX / "host-pvm-cpuinfo.txt").read_text()

INTEL = (FIX / "intel-vmx-cpuinfo.txt").read_text()

OUTER = (FIX / "outer-epyc-svm-cpuinfo.txt").read_text()

# -- each layer's accelerator ------------------------------------------------------------------
PVM = support.host_nesting(THIS_HOST, {}, ("kvm", "kvm_pvm"))

AMD_ON = support.host_nesting(OUTER, {"kvm_amd": "1"})

INTEL_OFF = support.host_nesting(INTEL, {"kvm_intel": "N"})

NO_KVM = "kvm probe: QEMU failed: boom"


@pytest.mark.parametrize("outer, cpu, inner, kvm, host, want", [
    # this machine: no usable KVM -> the outer under TCG with emulated AMD-V, KVM inside
    ("auto", "auto", "auto", False, PVM, ("tcg", "EPYC,+svm", "kvm")),
    # a KVM host that nests: KVM in KVM, -cpu host
    ("auto", "auto", "auto", True, AMD_ON, ("kvm", "host", "kvm")),
    # a KVM host with nested=N: the outer under KVM without the extensions, TCG inside
    ("auto", "auto", "auto", True, INTEL_OFF, ("kvm", "host", "tcg")),
    # TCG asked for on a KVM host: AMD-V emulated whatever the host's CPU
    ("tcg", "auto", "auto", True, INTEL_OFF, ("tcg", "EPYC,+svm", "kvm")),
    ("tcg", "max", "auto", False, PVM, ("tcg", "max", "kvm")),
    ("tcg", "qemu64", "auto", False, PVM, ("tcg", "qemu64", "tcg")),
    ("auto", "auto", "tcg", False, PVM, ("tcg", "EPYC,+svm", "tcg")),
])
def test_the_layers_follow_the_hosts_kvm_and_nesting(outer, cpu, inner, kvm, host, want):
    layers = support.plan(outer, cpu, inner, kvm, "kvm probe: a guest kernel booted in 0.4 s"
                          if kvm else NO_KVM, host)
    assert (layers.outer_accel, layers.outer_cpu, layers.inner_accel) == want
    assert layers.name == f"{want[0]}+{want[2]}"


@pytest.mark.parametrize("outer, cpu, inner, kvm, host, words", [
    ("kvm", "auto", "auto", False, PVM,
     f"outer_accel=kvm is not usable here ({NO_KVM}); use outer_accel=tcg or auto"),
    ("auto", "auto", "kvm", True, INTEL_OFF, "accel=kvm needs the virtualization extensions in "
                                             "the outer guest: no hardware nesting here"),
    ("tcg", "Skylake-Server,+vmx", "kvm", False, PVM, "TCG emulates AMD-V only, never VMX"),
    ("kvm", "EPYC", "kvm", True, AMD_ON, "only -cpu host passes the host's extensions on"),
])
def test_what_this_host_cannot_run_is_refused_with_the_fix(outer, cpu, inner, kvm, host, words):
    with pytest.raises(support.Refused) as exc:
        support.plan(outer, cpu, inner, kvm, NO_KVM, host)
    assert words in str(exc.value)
