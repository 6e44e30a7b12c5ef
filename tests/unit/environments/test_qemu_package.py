"""The qemu package's seams: each fakeable function has one place to patch, and every caller
(the probe, resolve, the KVM probe's cache key, metadata) goes through it."""
import inspect

from virtbench.measure.environments import qemu
from virtbench.measure.environments.base import EnvSpec
from virtbench.measure.environments.qemu.vmm import kvm_probe, version
from virtbench.machinery.image import guest_image as image

FAKE = ("9.9.9", "QEMU emulator version 9.9.9")


def test_package_attribute_kvm_probe_is_the_module_not_the_function():
    # re-exporting the function from vmm/__init__ would shadow the submodule: a test patching
    # `qemu.vmm.kvm_probe` would then replace a name nothing calls
    assert inspect.ismodule(qemu.vmm.kvm_probe) and qemu.vmm.kvm_probe is kvm_probe


def test_one_patch_of_version_reaches_every_caller(monkeypatch):
    monkeypatch.setattr(version, "qemu_version", lambda: FAKE)
    monkeypatch.setattr(kvm_probe, "kvm_probe",
                        lambda **kw: kvm_probe.KvmProbe(False, "kvm probe: faked"))
    monkeypatch.setattr(image, "cached", lambda: None)
    usable = qemu.Qemu.probe()
    assert usable.details["qemu_version"] == "9.9.9"
    assert usable.details["kvm_reason"] == "kvm probe: faked"
    assert "|qemu 9.9.9|" in kvm_probe._probe_key()
    env = qemu.Qemu(EnvSpec.parse("qemu"))
    env.resolve()
    assert env.accel == "tcg" and env.accel_reason == "kvm probe: faked"
    assert env.metadata()["qemu_version"] == "9.9.9"
