"""class Qemu: options and label, accelerator choice, the life-cycle steps, and what it offers
benchmarks, each through a collaborator it owns and passes what it needs:

    work      host/watch.py WorkDir         work directory, manifest, guardian      (prepare)
    ns        netns.NetNS                   the namespace the guest's tap lives in  (start)
    vmm       vmm/process.py QemuProcess    QEMU and its QMP monitor                (start)
    agent     transport.SocketAgent         the guest agent's channel               (ready)
    guest     booted/guest.py Guest         what is done inside the guest           (ready)
    profiler  profiling.ExitProfiler        --profile exits, a TCG twin             (first profile)

Each is registered in `resources` when it is made, so stop() (the base's) releases them in
reverse: profiler, remote namespace, a clean power-off, the agent, QEMU, the namespace, the
work directory with what its manifest lists, its guardian."""
from __future__ import annotations

import secrets
import sys
import time
from pathlib import Path

from ....machinery.host.net import netns
from ....core.capabilities import Capabilities, can
from ....core.errors import VirtbenchError
from ....machinery.image import guest_image, suites, variant
from ....machinery.host.watch import WorkDir
from ....machinery.host.net.netpath_types import NetPath, SshTarget
from ..base import Environment, Usability
from .cmdline import firmware, microvm
from . import hugepages, netdisk
from .booted import knobs
from .vmm import kvm_probe, version
from .vmm.binary import QemuBinary
from .cmdline.argv import build_argv, net_queues
from .booted.boot import make_root_overlay, make_scratch, power_off, scratch_backing, wait_for_agent
from .booted.guest import GUEST_KERNEL_DIR, Guest
from .metadata import qemu_metadata
from .cmdline.options import (
    OPTIONS,
    check_combination,
    check_knobs,
    check_machine,
    resolve_machine,
    size_bytes,
)
from .vmm.hygiene import sweep_stale
from .profiling import ExitProfiler, exit_profile_answer
from .resolve import check_host_support, choose_accel, choose_vhost
from .booted.tunings import boot_args, check_tunings
from .vmm.process import QemuProcess, read_qmp_version

WORK_PREFIX = "vbqemu-"


class Qemu(Environment):
    kind = "qemu"
    summary = "a Debian guest under QEMU (KVM when a probe boot works, TCG otherwise)"
    options = OPTIONS

    def __init__(self, spec):
        super().__init__(spec)
        self.accel: str | None = None
        self.accel_reason = ""
        self.machine = resolve_machine(self.values["disk"], self.values["machine"])
        check_combination(self.values["cache"], self.values["aio"])
        check_machine(self.values)
        firmware.check_firmware({**self.values, "machine": self.machine})
        check_tunings(self.values, self.kind)
        check_knobs(self.values)
        self.cpu = self.values["cpu"]
        # the QEMU it runs: the system's, or binary= (checked, and its -version read, now)
        self.qemu = QemuBinary(self.values.get("binary", ""), self.values.get("datadir", ""),
                               f"environment {self.kind}")
        self.qemu_version_qmp: str | None = None   # QMP query-version, once the guest is up
        self.vhost = False
        self.mac = "52:54:00:%02x:%02x:%02x" % tuple(secrets.token_bytes(3))
        self.extra_argv: list[str] = []   # more QEMU arguments (a profiling plugin)
        self.extra_boot_args: list[str] = []   # more kernel command-line words (a boot timer)
        self.shared_root = False          # the root disk an overlay file a second QEMU can
                                          # open (a restore, a migration's destination)
        self.launch_cfg: dict | None = None   # the configuration QEMU was started with
        self.image_variant = "guest"      # "host": the image that can host guests (QEMU, perf,
                                          # virtbench inside; image/host_image.py)
        self.ports: list[str] = []        # more virtio-serial ports (port_socket(name))
        self.scratch_given: tuple[str, str] | None = None   # (device, format) to use as the
                                          # scratch disk instead of making one (a nested
                                          # guest's: the outer guest's own scratch disk)
        self.image: guest_image.ImageInfo | None = None
        self.image_packages: tuple[str, ...] = ()   # its benchmarks' packages: the variant
        self.work: WorkDir | None = None
        self.ns: netns.NetNS | None = None
        self.vmm: QemuProcess | None = None
        self.guest: Guest | None = None
        self.profiler: ExitProfiler | None = None
        self.guest_uptime_at_ready: float | None = None
        self._profiler_held = None
        self.knobs_read: dict = {}        # QMP's and the guest's read-back of the knobs

    # -- identity ------------------------------------------------------------------------
    @property
    def kind_label(self) -> str:
        """<kind>-<accel>/<disk>/<nic> (qemu-tcg/ide/e1000), then every other option that
        differs from its default; linux=SUITE as the Linux series it brings (linux-6.12)."""
        accel = self.accel or self.values["accel"]
        parts = [f"{self.qemu.label_kind(self.kind)}-{accel}", self.values["disk"],
                 self.values["nic"]]
        for name, opt in self.options.items():
            if name in ("accel", "disk", "nic") or not opt.in_label:
                continue
            if name == "linux":
                part = suites.label_part(self.values.get("linux"))
                if part:
                    parts.append(part)
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
        self.qemu.version()
        self.accel, self.accel_reason, note = choose_accel(self.values["accel"], self.spec,
                                                           self.qemu)
        if note:
            self.notes.append(note)
        if self.cpu == "auto":
            self.cpu = "host" if self.accel == "kvm" else "max"
        check_host_support(self.values)
        self.vhost = choose_vhost(self.values)

    def capabilities(self) -> Capabilities:
        """A guest virtbench boots has everything: its own scratch disk, a tap on a path
        of namespaces with a remote one behind it, its sshd, QMP stop/cont, root inside."""
        return super().capabilities().with_(
            scratch=can("disk"), scratch_device=can(f"the {self.values['disk']} scratch disk"),
            net_path=can(self.values["nic"]), remote_peer=can("a namespace behind the tap"),
            ssh_target=can("the guest's sshd"), pause=can("QMP stop/cont"),
            drop_caches=can("the guest's, then the host's"),
            memory_size=can(f"mem={self.values['mem']}"), pair_end=can(),
            exit_profile=exit_profile_answer(self.accel or self.values["accel"]),
            guest_root_io=can("root in the guest: port 0xed and the HPET of QEMU's device model"),
            boot_phases=can("a twin booted with a boot-timer port (isa-debugcon) and the "
                            "guest's kernel log"),
            footprint=can("the QEMU process's smaps; its guest RAM by size"),
            snapshot=can("QMP stop + migrate to a file; a new QEMU -incoming from it"),
            migrate=can("QMP migrate between two QEMUs on this host over a unix socket"),
            packages=can("a variant of the guest image with them, built on first use and "
                         "cached by the package set"))

    def add_packages(self, packages) -> None:
        """Boot the variant of the guest image with these packages too (built at prepare)."""
        self.image_packages = variant.package_set((*self.image_packages, *packages))

    # -- the life-cycle steps ------------------------------------------------------------
    def prepare(self) -> None:
        """Sweep what dead runs left, build (or find) the image, make the work directory
        and start its guardian."""
        sweep_stale()
        self.image = self._build_image(  # minutes the first time: say what it is doing
            progress=variant.open_line("  guest image: ", _to_stderr))
        self.work = WorkDir(WORK_PREFIX)
        self.resources.add("the work directory", self._remove_work)
        self.work.set(pidfile=str(self.work.path / "qemu.pid"))
        self.work.guard()

    def _build_image(self, progress) -> guest_image.ImageInfo:
        if self.image_variant == "host":
            from ....machinery.image import host_image
            return host_image.build(progress=progress)
        return guest_image.build(progress=progress, linux=self.values.get("linux"),
                                 packages=self.image_packages)

    def _remove_work(self) -> None:
        work, self.work = self.work, None
        if work is not None:
            work.remove()      # QEMU if still there, loops, namespaces, dirs; the guardian

    def launch(self) -> None:
        """The scratch disk, the huge pages, the namespace, the disk's server, QEMU."""
        scratch, scratch_format = self.scratch_given or make_scratch(self.values, self.work)
        self._reserve_hugepages()
        self._make_namespace().create()
        served = self._serve_scratch(scratch)     # in the namespace (nfs), before QEMU
        self.vmm = QemuProcess(self.label, self.work.path)
        self.resources.add("QEMU", self.vmm.end)
        fw = self.values.get("firmware", firmware.DEFAULT)
        flash = firmware.firmware_files(fw, self.work.path)
        cfg = {
            "qemu": self.qemu.path, "data_argv": self.qemu.data_argv(),
            "qemu_env": self.qemu.env(), "accel": self.accel, "machine": self.machine,
            "cpu": self.cpu, "vcpus": self.values["vcpus"], "mem": self.values["mem"],
            "linux": firmware.boot_kernel(self.image, fw),
            "initrd": self.image.initrd,
            "root_image": self.image.path, "root_label": self.image.root_label,
            "scratch": scratch, "scratch_format": scratch_format, **flash,
            "cache": self.values["cache"], "aio": self.values["aio"],
            "disk": self.values["disk"], "nic": self.values["nic"], "vhost": self.vhost,
            "mac": self.mac, "guest_addr": self.ns.guest_addr, "tap": self.ns.tap,
            "console_log": self.vmm.console_log, "agent_socket": self.work.path / "agent.sock",
            "agent_transport": self.values["agent"],
            "qmp_socket": self.vmm.qmp_socket, "pidfile": self.work.path / "qemu.pid",
            "name": f"virtbench-{self.ns.name}",
            "boot_args": boot_args(self.values) + microvm.boot_args(self.machine, self.accel)
            + list(self.extra_boot_args),
            "ports": {name: self.port_socket(name) for name in self.ports},
            "hugepages": self.values["hugepages"] == "on",
            "iothread": self.values["iothread"] == "on", "queues": self.values["queues"],
            **served,
        }
        if self.shared_root:
            cfg.update(root_image=make_root_overlay(self.image.path, self.work),
                       root_format="qcow2", root_snapshot=False)
        self.launch_cfg = cfg
        pid = self.vmm.launch(build_argv(cfg) + list(self.extra_argv), self.ns.exec_argv([]),
                              cfg["qemu_env"])
        self.work.set(qemu_pid=pid)

    def port_socket(self, name: str) -> Path:
        """The host's unix socket of the extra virtio-serial port `name` (see `ports`)."""
        return self.work.path / f"port-{name}.sock"

    def _reserve_hugepages(self) -> None:
        """hugepages=on: the pages the pool lacks, listed in the manifest, given back at
        stop (after QEMU: released in reverse)."""
        if self.values["hugepages"] != "on":
            return
        added = hugepages.reserve(size_bytes(self.values["mem"]))
        self.work.set(hugepages_added=added)

        def release():
            hugepages.release(added)
            self._unlist("hugepages_added")
        self.resources.add("the huge pages", release)

    def _unlist(self, field: str) -> None:
        """A manifest field whose thing is gone (not again by the work directory's cleanup)."""
        if self.work is not None and field in self.work.data:
            del self.work.data[field]
            self.work.save()

    def _serve_scratch(self, scratch: str) -> dict:
        """backing=nbd|nfs: the scratch disk's server (netdisk.serve); the -drive keys."""
        return netdisk.serve(self.values, scratch, self.work, self.ns.exec_argv([]),
                             self.resources, self._unlist)

    def _make_namespace(self) -> netns.NetNS:
        """Instance i of a group gets its own subnet, 10.213.i.0/24; listed, then made."""
        i = self.net_index
        self.ns = netns.NetNS(host_addr=f"10.213.{i}.1/24", guest_addr=f"10.213.{i}.2/24",
                              multi_queue=net_queues(self.values["nic"],
                                                     self.values.get("queues", "auto")) > 1)
        self.work.set(netns=self.ns.name)
        self.resources.add("the network namespace", self._delete_namespace)
        return self.ns

    def _delete_namespace(self) -> None:
        ns, self.ns = self.ns, None
        if ns is not None:
            ns.delete()

    def ready(self) -> None:
        """The agent's first answer, then QMP, our kernels staged and the tunings applied."""
        agent, self.guest_uptime_at_ready = wait_for_agent(
            self.vmm, self.work.path / "agent.sock", self.label, self.values["boot_timeout"])
        self._hold_guest(agent)
        self.vmm.connect()
        qmp = getattr(self.vmm, "qmp", None)    # (a libvirt domain's VMM has none)
        if qmp is not None:
            self.knobs_read = knobs.read_from(qmp, self.values)
            self.qemu_version_qmp = read_qmp_version(qmp)
        note = self.guest.stage_kernels()
        if note:
            self.notes.append(note)
        self.guest.apply_tunings(self.knobs_read if qmp is not None else None)

    def _hold_guest(self, agent) -> None:
        """The agent is this environment's; stop() powers the guest off through it first."""
        self.attach(agent)
        self.boot_s = time.monotonic() - self.vmm.started_at
        vmm = self.vmm
        self.resources.add("a clean power-off", lambda: power_off(agent, vmm))
        self.guest = Guest(self.label, self.values, agent, self.ns, self.mac, self.image,
                           self.work, self.resources)
        self.resources.add("the guest side", lambda: setattr(self, "guest", None))

    # -- the VMM -------------------------------------------------------------------------
    def is_alive(self) -> bool:
        return self.vmm is not None and self.vmm.running()

    def lost_reason(self) -> str:
        return self.vmm.lost_reason() if self.vmm is not None else "QEMU is not running"

    @property
    def paused(self) -> bool:
        return self.vmm is not None and self.vmm.paused

    def pause(self) -> None:
        if self.vmm is not None:
            self.vmm.pause()

    def resume(self) -> None:
        if self.vmm is not None:
            self.vmm.resume()

    def vcpu_threads(self) -> list[int]:
        return self.vmm.vcpu_threads() if self.vmm is not None else []

    def pin_threads(self, bench, params: dict) -> list[tuple[int, int]] | None:
        return self.vmm.pin_threads() if self.vmm is not None else None

    # -- inside the guest ----------------------------------------------------------------
    def _inside(self, what: str) -> Guest:
        if self.guest is None:
            raise VirtbenchError(f"{self.label}: {what}() before start()")
        return self.guest

    def kernel_path(self, name: str) -> str:
        return f"{GUEST_KERNEL_DIR}/{name}"

    @property
    def peer_ip(self) -> str | None:
        """The host-side address the guest reaches over its NIC (the network benchmark peer)."""
        return self.ns.host_ip if self.ns else None

    @property
    def guest_ip(self) -> str | None:
        return self.ns.guest_ip if self.ns else None

    @property
    def workdir(self) -> Path | None:
        return self.work.path if self.work is not None else None

    def scratch_device(self) -> str:
        return self._inside("scratch_device").scratch_device()

    def scratch_dir(self) -> str:
        return self._inside("scratch_dir").scratch_dir()

    def drop_caches(self) -> None:
        self._inside("drop_caches").drop_caches()

    def net_path(self) -> NetPath:
        return self._inside("net_path").net_path()

    def ssh_target(self) -> SshTarget:
        return self._inside("ssh_target").ssh_target()

    def scratch_backing(self) -> str | None:
        if self.scratch_given is not None:
            return self.scratch_given[0]
        return scratch_backing(self.values, self.work)

    def scratch_cache_mode(self) -> str | None:
        return self.values["cache"]

    def memory_bytes(self) -> int | None:
        """The guest's RAM (the mem option)."""
        return size_bytes(self.values["mem"])

    def host_memory_reserved(self) -> int:
        return size_bytes(self.values["mem"])

    # -- exit profiles -------------------------------------------------------------------
    def exit_profiler(self) -> ExitProfiler:
        """This boot's profiler (made at the first profiled trial, released at stop)."""
        if self.profiler is None:
            self.profiler = ExitProfiler(self, self.vmm, self.work, self._make_twin)
            self._profiler_held = self.resources.add("the exit profiler", self._end_profiler)
        return self.profiler

    def _make_twin(self, extra_argv: list[str], **options: str) -> "Qemu":
        """A fresh guest of this one's spec (with `options` changed), not started."""
        spec = self.spec if not options else type(self.spec)(
            self.spec.kind, {**self.spec.options, **options})
        twin = type(self)(spec)
        twin.net_index = self.net_index
        twin.extra_argv = extra_argv
        twin.image_variant = self.image_variant
        twin.image_packages = self.image_packages      # a profiling twin runs its benchmarks
        return twin

    def _end_profiler(self) -> None:
        profiler, self.profiler, self._profiler_held = self.profiler, None, None
        if profiler is not None:
            profiler.end()

    def profiled_trial(self, bench, params: dict):
        self.resolve()
        return self.exit_profiler().profiled_trial(bench, params, self.accel)

    def end_profiling(self) -> None:
        if self._profiler_held is not None:
            self._profiler_held.release()       # a profiling twin goes before its guest

    # -- the life cycle's costs (vmlife/; each on a twin but footprint) --------------------
    def measure_boot(self):
        from .booted.boottimer import measure_boot
        return measure_boot(self, self._make_twin)

    def footprint(self):
        from ....machinery.vmlife.footprint import vmm_footprint
        pid = self.vmm.process_id() if self.vmm is not None else None
        if pid is None:
            raise VirtbenchError(f"{self.label}: footprint() before start()")
        return vmm_footprint(pid, size_bytes(self.values["mem"]))

    def snapshot_cycle(self, params: dict) -> dict:
        from .vmstate.snapshot import snapshot_cycle
        return snapshot_cycle(self, params, self._make_twin)

    def migrate_cycle(self, params: dict) -> dict:
        from .vmstate.migrate import migrate_cycle
        return migrate_cycle(self, params, self._make_twin)

    # -- metadata ------------------------------------------------------------------------
    def metadata(self) -> dict:
        return qemu_metadata(self)


def _to_stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()
