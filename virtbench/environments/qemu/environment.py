"""class Qemu: options and label, accelerator choice, and the life cycle (work directory,
guardian, start, stop). The boot itself is the QemuBoot mixin (boot.py), the VMM process
QemuVmm (vmm.py), what it does inside the guest GuestSide (guest.py)."""
from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

from ... import netns, workroot
from ...errors import AgentError, EnvironmentUnusable, VirtbenchError
from ...guest import watch
from ...guest import image as guest_image
from ..base import Environment, Usability
from . import kvm_probe, version
from .boot import QemuBoot
from .guest import GuestSide
from .profiling import ExitProfiling
from .vmm import QemuVmm
from .options import OPTIONS, check_combination, resolve_machine
from .tunings import check_tunings
from .process import install_signal_handlers, live, live_lock, sweep_stale
from .qmp import Qmp


class Qemu(QemuBoot, QemuVmm, GuestSide, ExitProfiling, Environment):
    kind = "qemu"
    summary = "a Debian guest under QEMU (KVM when a probe boot works, TCG otherwise)"
    options = OPTIONS

    def __init__(self, spec):
        super().__init__(spec)
        self.accel: str | None = None
        self.accel_reason = ""
        self.machine = resolve_machine(self.values["disk"], self.values["machine"])
        check_combination(self.values["cache"], self.values["aio"])
        check_tunings(self.values, self.kind)
        self.cpu = self.values["cpu"]
        self.vhost = False
        self.image: guest_image.ImageInfo | None = None
        self.workdir: Path | None = None
        self.proc: subprocess.Popen | None = None
        self.ns: netns.NetNS | None = None
        self.qmp: Qmp | None = None
        self.console_log: Path | None = None
        self.kept_console_log: Path | None = None
        self._guardian: watch.Guardian | None = None
        self._manifest: dict = {}
        self._scratch_dev: str | None = None
        self._scratch_dir: str | None = None
        self._net = None           # the NetPath, once net_path() made it
        self._topology = None
        self._kernel_names: list[str] = []
        self.guest_uptime_at_ready: float | None = None
        self.stage_s: float | None = None
        self.mac = "52:54:00:%02x:%02x:%02x" % tuple(secrets.token_bytes(3))
        self.paused = False
        self._vcpu_tids: list[int] | None = None
        self.extra_argv: list[str] = []   # more QEMU arguments (a profiling plugin)
        self.tunings_read: dict = {}      # the guest's read-back of the tunings (metadata)
        self.image_variant = "guest"      # "host": the image that can host guests (QEMU, perf,
                                          # virtbench inside; guest/host_image.py)

    # -- identity ------------------------------------------------------------------------
    @property
    def label(self) -> str:
        """<kind>-<accel>/<disk>/<nic> (qemu-tcg/ide/e1000), then every other option that
        differs from its default."""
        accel = self.accel or self.values["accel"]
        parts = [f"{self.kind}-{accel}", self.values["disk"], self.values["nic"]]
        for name, opt in self.options.items():
            if name in ("accel", "disk", "nic") or not opt.in_label:
                continue
            value = self.values[name]
            if value == opt.default:
                continue
            if name == "machine" and value == resolve_machine(self.values["disk"], "auto"):
                continue
            parts.append(f"{name}={value}")
        return "/".join(parts)

    @classmethod
    def probe(cls) -> Usability:
        try:
            ver, line = version.qemu_version()
        except VirtbenchError as exc:
            return Usability(False, str(exc))
        kvm = kvm_probe.kvm_probe()
        details = {"qemu_version": ver, "qemu": line, "kvm": kvm.usable,
                   "kvm_reason": kvm.reason,
                   "image_cached": guest_image.cached() is not None}
        return Usability(True, "" if kvm.usable else "TCG only: " + kvm.reason, details)

    def resolve(self) -> None:
        if self.accel is not None:
            return
        version.qemu_version()
        wanted = self.values["accel"]
        if wanted == "tcg":
            self.accel, self.accel_reason = "tcg", "requested (accel=tcg)"
        else:
            kvm = kvm_probe.kvm_probe(build=True)     # the kernel first, then the probe
            if kvm.usable:
                self.accel = "kvm"
                self.accel_reason = ("requested (accel=kvm); " if wanted == "kvm" else "") + kvm.reason
            elif wanted == "kvm":
                raise EnvironmentUnusable(f"environment {self.spec}: accel=kvm is not usable "
                                          f"here ({kvm.reason}); use accel=tcg or accel=auto")
            else:
                self.accel, self.accel_reason = "tcg", kvm.reason
                self.notes.append(f"TCG, not KVM: {kvm.reason}")
        if self.cpu == "auto":
            self.cpu = "host" if self.accel == "kvm" else "max"
        vh = self.values["vhost"]
        has_vhost = os.path.exists("/dev/vhost-net")
        if self.values["nic"] != "virtio-net":
            if vh == "on":
                raise VirtbenchError("environment qemu: vhost=on works only with nic=virtio-net")
            self.vhost = False
        elif vh == "on" and not has_vhost:
            raise EnvironmentUnusable("environment qemu: vhost=on but /dev/vhost-net does not "
                                      "exist; load it with: modprobe vhost_net")
        else:
            self.vhost = vh == "on" or (vh == "auto" and has_vhost)

    # -- life cycle ----------------------------------------------------------------------
    def _save_manifest(self) -> None:
        if self.workdir is not None:
            watch.write_manifest(self.workdir, self._manifest)

    def start(self) -> None:
        self.resolve()
        install_signal_handlers()
        sweep_stale()
        self.image = self._build_image(  # minutes the first time: say what it is doing
            progress=lambda msg: print(f"  guest image: {msg}", file=sys.stderr, flush=True))
        self.workdir = workroot.make_dir("vbqemu-")
        self._manifest = watch.new_manifest(self.workdir,
                                            pidfile=str(self.workdir / "qemu.pid"))
        self._save_manifest()
        with live_lock:
            live.add(self)
        try:
            self._guardian = watch.Guardian(self.workdir / "manifest.json")
            self._boot()
            self._apply_tunings()
        except BaseException:
            self.stop()
            raise

    def _build_image(self, progress) -> guest_image.ImageInfo:
        if self.image_variant == "host":
            from ...guest import host_image
            return host_image.build(progress=progress)
        return guest_image.build(progress=progress)

    def stop(self) -> None:
        self.end_profiling()          # a profiling twin goes with its guest
        with live_lock:
            live.discard(self)
        paused, self.paused = self.paused, False
        self._vcpu_tids = None
        # a paused guest's agent is frozen: do not wait on it, end the VMM its own way
        if not paused and self.agent is not None and self._vmm_running():
            try:  # a clean power-off: sysrq o, and -no-reboot ends QEMU
                self.agent.exec(["sh", "-c", "(sleep 0.1; echo o > /proc/sysrq-trigger) "
                                             ">/dev/null 2>&1 </dev/null &"], timeout=5)
                self._vmm_wait(5)
            except (AgentError, subprocess.TimeoutExpired, OSError):
                pass
        self._vmm_end()
        if self.agent is not None:
            self.agent.close()
            self.agent = None
        if self.workdir is not None:
            watch.cleanup(self._manifest)
        if self._topology is not None:
            self._topology.delete()
            self._topology = None
        if self.ns is not None:
            self.ns.delete()
        self._net = None
        self._scratch_dir = None
        self._scratch_dev = None
        if self._guardian is not None:
            self._guardian.dismiss()
            self._guardian = None
        self.proc = None
        self.workdir = None
        self.ns = None
