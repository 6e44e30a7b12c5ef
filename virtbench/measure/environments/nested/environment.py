"""class Nested: an inner guest inside an outer guest, benchmarks in the inner one. Its parts,
each made in a life-cycle step and registered for release:

    outer     qemu.Qemu                  the outer guest, from the host image        (start)
    inner     inside.py in the outer     boots the inner guest, relays its agent     (ready)
    agent     transport.SocketAgent      the inner guest's agent, through the relay  (ready)
    guest     qemu.booted.guest.Guest    the inner's scratch disk, through the agent (ready)

stop() releases them in reverse: the agent, the inner guest (SIGTERM to the program inside,
which powers it off and removes what it made there), the outer guest (power-off, QEMU, its
namespace, its work directory, its guardian). The outer guest's guardian and manifest are
the qemu kind's: if virtbench dies by SIGKILL, the guardian kills the outer QEMU, and with it
everything inside."""
from __future__ import annotations

import json
import time

from ....core.capabilities import Capabilities, can, cannot
from ....core.errors import AgentError, AgentSilent, EnvironmentUnusable, VirtbenchError
from ....machinery.image import host_image
from ....machinery.agent.transport import ExecResult, SocketAgent
from ..base import Environment, Usability, drop_page_cache
from ..qemu import Qemu
from ..qemu.vmm import kvm_probe, version
from ..qemu.cmdline.argv import PORT_PREFIX
from ..qemu.booted.guest import GUEST_KERNEL_DIR, Guest
from ..qemu.cmdline.options import size_bytes
from . import support
from .options import OPTIONS, check, inner_spec, outer_spec

PORT = "inner"                    # the outer guest's virtio-serial port to the relay
INSIDE = "virtbench.measure.environments.nested.inside"
INSIDE_LOG = "/var/log/virtbench-inner.log"
INSIDE_ENV = {"PATH": "/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
              "VIRTBENCH_CACHE": host_image.GUEST_CACHE, "LC_ALL": "C.UTF-8"}
# SIGTERM to the program inside, then wait (at most 30 s) while it stops the inner guest
STOP_INSIDE = ('kill -TERM "$1" 2>/dev/null || exit 0; i=0; '
               'while kill -0 "$1" 2>/dev/null; do i=$((i+1)); '
               '[ $i -gt 300 ] && { kill -KILL "$1"; exit 1; }; sleep 0.1; done')
# what metadata keeps of each layer's own (the qemu kind's) metadata
LAYER_KEYS = ("accel", "accel_reason", "cpu_model", "vcpus", "mem", "machine",
              "qemu_version", "qemu", "boot_s", "guest_uptime_at_ready_s", "qemu_argv",
              "guest_kernel", "kernel", "platform", "platform_evidence", "image_recipe",
              "disk", "nic", "cache", "aio", "guest_disk_drivers", "guest_nic_drivers",
              "vmx_or_svm", "hypervisor_flag")
# the outer guest while the program inside boots the inner one: silent this long, it has
# stopped (an outer guest under TCG with emulated AMD-V has been seen to wedge here, its
# vCPUs spinning, its agent answering nothing); it is booted once more
OUTER_SILENCE_S = 120.0
OUTER_BOOTS = 2
NET_REASON = ("environment nested: network benchmarks are not offered: the inner guest's NIC "
              "ends in a namespace inside the outer guest, with no path to this host through "
              "both layers; measure the one-layer path with --env qemu")


def parse_report(res: ExecResult) -> dict:
    """What inside.py printed (its last line, JSON), or a failure saying what it left."""
    lines = res.stdout.strip().splitlines()
    if lines:
        try:
            report = json.loads(lines[-1])
            if isinstance(report, dict) and "state" in report:
                return report
        except ValueError:
            pass
    said = (res.stderr.strip() or res.stdout.strip() or f"exit status {res.exit}").splitlines()
    why = "timed out" if res.timed_out else said[-1]
    return {"state": "failed", "error": f"the program inside the outer guest failed: {why}"}


def layer_meta(meta: dict) -> dict:
    """What metadata keeps of one layer's qemu metadata, with the -cpu it was given."""
    kept = {k: meta[k] for k in LAYER_KEYS if k in meta}
    kept["cpu"] = argv_value(meta.get("qemu_argv") or [], "-cpu")
    return kept


def argv_value(argv: list[str], flag: str) -> str | None:
    """The word after `flag` in a command line, or None."""
    try:
        return argv[argv.index(flag) + 1]
    except (ValueError, IndexError):
        return None


class Nested(Environment):
    kind = "nested"
    summary = ("a guest inside a guest: benchmarks in an inner guest booted inside an outer "
               "guest that has the virtualization extensions (KVM nested in KVM, or in TCG "
               "with emulated AMD-V)")
    options = OPTIONS

    def __init__(self, spec):
        super().__init__(spec)
        check(self.values, self.kind)
        self.layers: support.Layers | None = None
        self.host_nesting: support.HostNesting | None = None
        self.outer: Qemu | None = None
        self.outer_meta: dict = {}
        self.inner: dict = {}           # what the program inside reported at ready
        self.inside_pid: int | None = None
        self.inside_s: float | None = None   # starting the program to its report
        self.outer_boots = 0
        self._outer_held = None
        self.guest: Guest | None = None
        self._t0: float | None = None

    # -- identity ------------------------------------------------------------------------
    @property
    def kind_label(self) -> str:
        """nested-<outer accel>+<inner accel> (nested-tcg+kvm), then every other option
        that differs from its default, as name=value (two layers: names say which)."""
        accel = (self.layers.name if self.layers is not None
                 else f"{self.values['outer_accel']}+{self.values['accel']}")
        parts = [f"{self.kind}-{accel}"]
        for name, opt in self.options.items():
            if name not in ("accel", "outer_accel") and opt.in_label \
                    and self.values[name] != opt.default:
                parts.append(f"{name}={self.values[name]}")
        return "/".join(parts)

    @classmethod
    def probe(cls) -> Usability:
        """Is nesting possible here, and how: both layers' accelerators, and why."""
        try:
            ver, _ = version.qemu_version()
        except VirtbenchError as exc:
            return Usability(False, str(exc))
        kvm = kvm_probe.kvm_probe()
        host = support.read_host_nesting()
        layers = support.plan("auto", "auto", "auto", kvm.usable, kvm.reason, host)
        return Usability(True, support.summary(layers, host),
                         {"qemu_version": ver, "layers": layers.name, "kvm": kvm.usable,
                          "hardware_nesting": host.possible, "why": host.reason,
                          "host_image_cached": _host_image_cached()})

    def resolve(self) -> None:
        """Each layer's accelerator and the outer's CPU model, from the host's KVM probe and
        its nesting (support.plan); settled before the label is used."""
        if self.layers is not None:
            return
        version.qemu_version()
        if self.values["outer_accel"] == "tcg":
            usable, reason = False, "requested (outer_accel=tcg)"
        else:
            kvm = kvm_probe.kvm_probe(build=True)
            usable, reason = kvm.usable, kvm.reason
        self.host_nesting = support.read_host_nesting()
        try:
            self.layers = support.plan(self.values["outer_accel"], self.values["outer_cpu"],
                                       self.values["accel"], usable, reason, self.host_nesting)
        except support.Refused as exc:
            raise EnvironmentUnusable(f"environment {self.spec}: {exc}") from None
        if self.layers.outer_accel == "tcg":
            self.notes.append(f"the outer guest runs under TCG (-cpu {self.layers.outer_cpu}): "
                              f"{self.layers.outer_reason}")
        if self.layers.inner_accel == "tcg":
            self.notes.append(f"the inner guest runs under TCG: {self.layers.inner_reason}")

    def capabilities(self) -> Capabilities:
        """The inner guest's scratch disk and memory; pausing and cache dropping through the
        outer guest; no network path (NET_REASON) and no exit profile of the inner guest."""
        return super().capabilities().with_(
            scratch=can("disk"),
            scratch_device=can(f"the inner guest's {self.values['disk']} scratch disk, on the "
                               "outer guest's virtio-blk disk"),
            net_path=cannot(NET_REASON),
            remote_peer=cannot(NET_REASON),
            ssh_target=cannot("environment nested: transfer benchmarks are not offered: the "
                              "inner guest's sshd is not reachable from this host (no network "
                              "path through both layers); use --env qemu"),
            pause=can("QMP stop/cont of the outer guest (the inner guest stops with it)"),
            drop_caches=can("the inner guest's, the outer guest's, then the host's"),
            memory_size=can(f"mem={self.values['mem']}"),
            exit_profile=cannot("environment nested: exit profiles of the inner guest are not "
                                "offered (its KVM runs inside the outer guest, out of reach of "
                                "this host's perf); profile --env qemu"),
            packages=cannot(f"{self.kind}: the inner guest boots the guest image inside the "
                            "host image, which has no package variants yet; run a benchmark "
                            "that needs Debian packages in qemu"))

    # -- the life-cycle steps ------------------------------------------------------------
    def prepare(self) -> None:
        """The host image (the outer guest's disk, with QEMU and virtbench inside)."""
        host_image.build(progress=lambda msg: print(f"  host image: {msg}", flush=True))

    def launch(self) -> None:
        """The outer guest, from the host image, with the extensions and a port to the relay:
        the qemu kind's whole start (its own steps, manifest and guardian)."""
        self._t0 = time.monotonic()
        self._launch_outer()

    def _launch_outer(self) -> None:
        outer = Qemu(outer_spec(self.values, self.layers.outer_accel))
        outer.image_variant = "host"
        outer.cpu = self.layers.outer_cpu
        outer.ports = [PORT]
        outer.net_index = self.net_index
        self.outer = outer
        self.outer_boots += 1
        self._outer_held = self.resources.add("the outer guest", self._stop_outer)
        outer.start()
        self.notes += [f"outer guest: {note}" for note in outer.notes]

    def _stop_outer(self) -> None:
        outer, self.outer = self.outer, None
        if outer is not None:
            outer.stop()

    def ready(self) -> None:
        """The program inside boots the inner guest (the KVM probe there first); then the
        inner guest's agent answers through the relay. An outer guest that stops answering
        meanwhile (OUTER_SILENCE_S) is booted once more, and the notes say so."""
        t0 = time.monotonic()
        for boot in range(1, OUTER_BOOTS + 1):
            try:
                report = self._run_inside()
                break
            except AgentSilent as exc:
                why = (f"the outer guest stopped answering while the inner guest booted "
                       f"(boot {boot} of the outer guest: {exc})")
                if boot == OUTER_BOOTS:
                    raise EnvironmentUnusable(f"{self.label}: {why}") from None
                self.notes.append(f"{why}; booted it again")
                self._outer_held.release()
                t0 = time.monotonic()
                self._launch_outer()
        self.inside_s = round(time.monotonic() - t0, 2)
        outer = self.outer
        if report.get("state") != "ready":
            raise EnvironmentUnusable(f"{self.label}: the inner guest did not start in the "
                                      f"outer guest: {report.get('error')}")
        self.inner = report
        self.inside_pid = int(report["pid"])
        self.resources.add("the inner guest", self._stop_inner)
        self.notes += [f"inner guest: {note}" for note in report.get("notes") or []]
        agent = self.attach(SocketAgent(outer.port_socket(PORT), name=self.label,
                                        connect_timeout=10))
        agent.ping(timeout=60)
        self.boot_s = time.monotonic() - self._t0
        self.guest = Guest(self.label, {"nic": self.values["nic"]}, agent, None, None, None,
                           None, self.resources)
        self.outer_meta = outer.metadata()

    def _run_inside(self) -> dict:
        """Run the program inside the outer guest until it reports (its last line)."""
        outer = self.outer
        timeout = self.values["boot_timeout"]
        argv = [f"{host_image.VENV}/bin/python", "-m", INSIDE,
                "--spec", str(inner_spec(self.values, self.layers.inner_accel)),
                "--scratch", outer.scratch_device(), "--port", PORT_PREFIX + PORT,
                "--timeout", str(max(60.0, timeout - 30)), "--log", INSIDE_LOG]
        try:
            return parse_report(outer.exec(argv, timeout=timeout, env=INSIDE_ENV,
                                           alive=OUTER_SILENCE_S))
        except BaseException:
            # interrupted (Ctrl-C) or the agent lost while the program inside still runs:
            # the outer guest's agent would answer a clean power-off only after it, so let
            # it go, and the outer's stop ends its QEMU at once
            if outer.agent is not None:
                outer.agent.close()
            raise

    def _stop_inner(self) -> None:
        """SIGTERM to the program inside: it powers the inner guest off and removes what it
        made in the outer guest. Not through a paused or dead outer guest (its own end ends
        the inner one)."""
        pid, self.inside_pid, self.guest = self.inside_pid, None, None
        outer = self.outer
        if pid is None or outer is None or outer.paused or not outer.is_alive():
            return
        try:
            outer.exec(["sh", "-c", STOP_INSIDE, "sh", str(pid)], timeout=45)
        except AgentError:
            pass

    # -- the outer guest's VMM -------------------------------------------------------------
    def is_alive(self) -> bool:
        return self.outer is not None and self.outer.is_alive()

    def lost_reason(self) -> str:
        if self.outer is None:
            return "the outer guest is not running"
        if not self.outer.is_alive():
            return f"the outer guest: {self.outer.lost_reason()}"
        tail = ""
        try:
            res = self.outer.exec(["tail", "-n", "2", INSIDE_LOG], timeout=15)
            tail = " ".join(res.stdout.split())[-300:]
        except AgentError:
            pass
        return ("the inner guest's agent stopped answering (outer guest still running)"
                + (f"; inside: {tail}" if tail else ""))

    @property
    def paused(self) -> bool:
        return self.outer is not None and self.outer.paused

    def pause(self) -> None:
        if self.outer is not None:
            self.outer.pause()

    def resume(self) -> None:
        if self.outer is not None:
            self.outer.resume()

    def pin_threads(self, bench, params: dict) -> list[tuple[int, int]] | None:
        """The outer guest's vCPU threads (the inner guest's run on them)."""
        return self.outer.pin_threads(bench, params) if self.outer is not None else None

    # -- inside the inner guest ------------------------------------------------------------
    def _inside(self, what: str) -> Guest:
        if self.guest is None:
            raise VirtbenchError(f"{self.label}: {what}() before start()")
        return self.guest

    def kernel_path(self, name: str) -> str:
        return f"{GUEST_KERNEL_DIR}/{name}"

    def scratch_device(self) -> str:
        return self._inside("scratch_device").scratch_device()

    def scratch_dir(self) -> str:
        return self._inside("scratch_dir").scratch_dir()

    def drop_caches(self) -> None:
        """The inner guest's page cache, the outer guest's, then the host's."""
        drop_page_cache(self)
        if self.outer is not None:
            self.outer.drop_caches()

    def scratch_backing(self) -> str | None:
        """The host file behind the outer guest's disk that carries the inner's scratch."""
        return self.outer.scratch_backing() if self.outer is not None else None

    def scratch_cache_mode(self) -> str | None:
        """The first layer's cache mode that keeps data in a page cache, else the inner's."""
        if self.values["outer_cache"] in ("writeback", "unsafe", "writethrough"):
            return self.values["outer_cache"]
        return self.values["cache"]

    def memory_bytes(self) -> int | None:
        return size_bytes(self.values["mem"])

    def host_memory_reserved(self) -> int:
        return size_bytes(self.values["outer_mem"])

    # -- metadata ------------------------------------------------------------------------
    def metadata(self) -> dict:
        """The inner guest's fingerprint (where benchmarks run), then both layers: each
        accelerator and CPU model, the nested parameter each host layer shows, each QEMU's
        version and command line, boot times."""
        inner = dict(self.inner.get("metadata") or {})
        layers = self.layers
        host = self.host_nesting
        meta = dict(inner)
        meta.update({
            "accel": layers.name if layers else None,
            "accel_reason": (f"outer: {layers.outer_reason}; inner: {inner.get('accel_reason')}"
                             if layers else None),
            "layers": (f"native -> outer ({layers.outer_accel}, -cpu {layers.outer_cpu}) -> "
                       f"inner ({inner.get('accel') or layers.inner_accel})" if layers else None),
            "outer_accel": layers.outer_accel if layers else None,
            "inner_accel": inner.get("accel") or (layers.inner_accel if layers else None),
            "outer_cpu": layers.outer_cpu if layers else None,
            "inner_cpu": argv_value(inner.get("qemu_argv") or [], "-cpu"),
            "host_nesting": ({"flag": host.flag, "module": host.module, "nested": host.nested,
                              "possible": host.possible, "reason": host.reason}
                             if host else None),
            "outer_nesting": self.inner.get("outer_nesting"),
            "boot_s": self.boot_s,
            "outer_boot_s": self.outer_meta.get("boot_s"),
            "outer_boots": self.outer_boots,
            "inner_boot_s": inner.get("boot_s"),
            "inner_start_s": self.inside_s,
            "inner_steps_s": self.inner.get("step_s"),
            "outer": layer_meta(self.outer_meta),
            "inner": layer_meta(inner),
        })
        return meta


def _host_image_cached() -> bool | str:
    try:
        return host_image.cached() is not None
    except VirtbenchError as exc:
        return str(exc)
