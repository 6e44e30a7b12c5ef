"""On a fresh KVM host the first run must probe KVM with a kernel present: the guest image
(its kernel) is built first, then the probe boots it."""
from pathlib import Path

from virtbench.measure.environments.qemu import Qemu
from virtbench.measure.environments.qemu.vmm import version
from virtbench.measure.environments.qemu.vmm import kvm_probe as kp
from virtbench.measure.environments.base import EnvSpec
from virtbench.machinery.image import guest_image as image


def test_fresh_host_builds_the_kernel_then_probes_and_runs_under_kvm(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTBENCH_CACHE", str(tmp_path))
    monkeypatch.setattr(kp, "_kvm_probe", None)
    monkeypatch.setattr(kp.os.path, "exists", lambda p: True)       # /dev/kvm is there
    monkeypatch.setattr(kp.os, "access", lambda p, mode: True)
    monkeypatch.setattr(version, "qemu_version", lambda: ("7.2.22", "QEMU emulator version 7.2.22"))
    monkeypatch.setattr(kp.Path, "glob", lambda self, pat: iter(()))  # no /boot/vmlinuz-*
    kernel = tmp_path / "vmlinux"
    kernel.write_text("kernel")
    calls: list[str] = []
    built: list[image.ImageInfo] = []

    def fake_cached():
        calls.append("cached")
        return built[0] if built else None

    def fake_build(force=False, progress=None):
        calls.append("build")
        info = image.ImageInfo(path=tmp_path / "root.raw", linux=kernel, initrd=tmp_path / "i",
                               root_label="vb", recipe_hash="h", size_bytes=1, build_s=0.0,
                               reused=False)
        built.append(info)
        return info

    def fake_probe(k, timeout):
        calls.append("probe")
        assert k == kernel, "the probe must boot the guest image's kernel"
        return kp.KvmProbe(True, "kvm probe: a guest kernel booted in 0.4 s", 0.4)

    monkeypatch.setattr(image, "cached", fake_cached)
    monkeypatch.setattr(image, "build", fake_build)
    monkeypatch.setattr(kp, "_run_kvm_probe", fake_probe)
    env = Qemu(EnvSpec.parse("qemu"))
    env.resolve()
    assert calls.index("build") < calls.index("probe")
    assert env.accel == "kvm" and env.label.startswith("qemu-kvm/")


def test_listing_kinds_does_not_build_the_image(monkeypatch):
    monkeypatch.setattr(kp, "_kvm_probe", None)
    monkeypatch.setattr(kp.os.path, "exists", lambda p: True)
    monkeypatch.setattr(kp.os, "access", lambda p, mode: True)
    monkeypatch.setattr(kp.Path, "glob", lambda self, pat: iter(()))
    monkeypatch.setattr(image, "cached", lambda: None)
    monkeypatch.setattr(image, "build", lambda **kw: (_ for _ in ()).throw(AssertionError("built")))
    assert not kp.kvm_probe().usable
    assert kp._kvm_probe is None        # a "no kernel" answer is never kept
