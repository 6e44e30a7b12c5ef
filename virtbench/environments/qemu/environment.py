"""class Qemu: options and label, accelerator choice, and the life cycle (work directory,
guardian, scratch image, network namespace, boot, agent, QMP, stop). What it does inside
the guest is the GuestSide mixin (guest.py)."""
from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ... import kernels, netns
from ...errors import AgentError, EnvironmentUnusable, VirtbenchError
from ...guest import guardian
from ...guest import image as guest_image
from ...transport import SocketAgent
from ..base import Environment, Usability
from . import kvm_probe, version
from .argv import build_argv
from .guest import GuestSide
from .profiling import ExitProfiling
from .options import OPTIONS, check_combination, resolve_machine
from .tunings import boot_args, check_tunings
from .process import (WORK_ROOT, describe_loss, die_with_parent, install_signal_handlers, live,
                      live_lock, sweep_stale)
from .qmp import Qmp


class GuestBootError(EnvironmentUnusable):
    """The guest never answered; `console_log` is the kept serial console."""

    def __init__(self, message: str, console_log: Path | None = None):
        super().__init__(message)
        self.console_log = console_log


class Qemu(GuestSide, ExitProfiling, Environment):
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
        self._guardian: subprocess.Popen | None = None
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
            tmp = self.workdir / "manifest.json.part"
            tmp.write_text(json.dumps(self._manifest))
            os.replace(tmp, self.workdir / "manifest.json")

    def _start_guardian(self) -> None:
        r, w = os.pipe()
        try:
            self._guardian = subprocess.Popen(
                [sys.executable, guardian.__file__, str(self.workdir / "manifest.json")],
                stdin=r, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, close_fds=True)
        finally:
            os.close(r)
        os.set_inheritable(w, False)
        self._guardian_fd = w

    def _make_scratch(self) -> tuple[str, str]:
        size = self.values["scratch"]
        backing = self.values["backing"]
        if backing == "qcow2":
            path = self.workdir / "scratch.qcow2"
            proc = subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(path), size],
                                  capture_output=True, text=True, timeout=60)
            if proc.returncode != 0:
                raise EnvironmentUnusable(f"qemu-img create failed: {proc.stderr.strip()}")
            return str(path), "qcow2"
        path = self.workdir / "scratch.raw"
        subprocess.run(["truncate", "-s", size, str(path)], check=True, timeout=30)
        if backing == "raw":
            return str(path), "raw"
        proc = subprocess.run(["losetup", "--find", "--show", str(path)],
                              capture_output=True, text=True, timeout=30)
        if proc.returncode != 0:
            raise EnvironmentUnusable(f"backing=device: losetup failed: {proc.stderr.strip()}")
        loop = proc.stdout.strip()
        self._manifest.setdefault("loops", []).append(loop)
        self._save_manifest()
        return loop, "raw"

    def start(self) -> None:
        self.resolve()
        install_signal_handlers()
        sweep_stale()
        self.image = guest_image.build(  # minutes the first time: say what it is doing
            progress=lambda msg: print(f"  guest image: {msg}", file=sys.stderr, flush=True))
        WORK_ROOT.mkdir(parents=True, exist_ok=True)
        self.workdir = Path(tempfile.mkdtemp(prefix="vbqemu-", dir=WORK_ROOT))
        me = os.getpid()
        self._manifest = {"owner": f"{me} {netns.process_start_time(me)}",
                          "workdir": str(self.workdir), "pidfile": str(self.workdir / "qemu.pid"),
                          "owners_dir": str(netns.OWNERS)}
        self._save_manifest()
        with live_lock:
            live.add(self)
        try:
            self._start_guardian()
            self._boot()
            self._apply_tunings()
        except BaseException:
            self.stop()
            raise

    def _boot(self) -> None:
        scratch, scratch_format = self._make_scratch()
        i = self.net_index   # instance i of a group gets its own subnet, 10.213.i.0/24
        self.ns = netns.NetNS(host_addr=f"10.213.{i}.1/24", guest_addr=f"10.213.{i}.2/24")
        self._manifest["netns"] = self.ns.name
        self._save_manifest()
        self.ns.create()
        self.console_log = self.workdir / "console.log"
        cfg = {
            "qemu": version.qemu_binary(), "accel": self.accel, "machine": self.machine,
            "cpu": self.cpu, "vcpus": self.values["vcpus"], "mem": self.values["mem"],
            "kernel": self.image.kernel, "initrd": self.image.initrd,
            "root_image": self.image.path, "root_label": self.image.root_label,
            "scratch": scratch, "scratch_format": scratch_format,
            "cache": self.values["cache"], "aio": self.values["aio"],
            "disk": self.values["disk"], "nic": self.values["nic"], "vhost": self.vhost,
            "mac": self.mac, "guest_addr": self.ns.guest_addr, "tap": self.ns.tap,
            "console_log": self.console_log, "agent_socket": self.workdir / "agent.sock",
            "agent_transport": self.values["agent"],
            "qmp_socket": self.workdir / "qmp.sock", "pidfile": self.workdir / "qemu.pid",
            "name": f"virtbench-{self.ns.name}", "boot_args": boot_args(self.values),
        }
        self.argv = build_argv(cfg) + list(self.extra_argv)
        stderr_path = self.workdir / "qemu.stderr"
        env = dict(os.environ, TMPDIR=str(self.workdir))  # snapshot=on's overlay lands here
        t0 = time.monotonic()
        with open(stderr_path, "wb") as err:
            # PR_SET_PDEATHSIG fires when the *thread* that forked exits, and preexec_fn is
            # unsafe in threads: use it from the main thread only (the guardian covers both)
            main = threading.current_thread() is threading.main_thread()
            self.proc = subprocess.Popen(self.ns.exec_argv(self.argv), stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=err, env=env,
                                         preexec_fn=die_with_parent if main else None,
                                         start_new_session=True)
        self._manifest["qemu_pid"] = self.proc.pid  # `ip netns exec` execs QEMU: same pid
        self._save_manifest()
        self.agent = self._wait_for_agent(t0, stderr_path)
        self.boot_s = time.monotonic() - t0
        self.qmp = Qmp(cfg["qmp_socket"])
        self._stage_kernels()

    def _vmm_failed(self, stderr_path: Path) -> EnvironmentUnusable:
        text = stderr_path.read_text(errors="replace").strip() if stderr_path.exists() else ""
        last = text.splitlines()[-1] if text else f"exit status {self.proc.returncode}"
        return EnvironmentUnusable(f"{self.label}: QEMU failed to start: {last}")

    def _keep_console(self) -> Path | None:
        if self.console_log is None or not self.console_log.exists():
            return None
        logs = kernels.cache_dir() / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        safe = self.label.replace("/", "_")
        dest = logs / f"{time.strftime('%Y%m%d-%H%M%S')}-{safe}-console.log"
        shutil.copy2(self.console_log, dest)
        self.kept_console_log = dest
        for old in sorted(logs.glob("*-console.log"))[:-20]:  # keep the 20 newest
            old.unlink(missing_ok=True)
        return dest

    def _wait_for_agent(self, t0: float, stderr_path: Path) -> SocketAgent:
        deadline = t0 + self.values["boot_timeout"]
        sock_path = self.workdir / "agent.sock"
        agent = None
        while time.monotonic() < deadline:
            if not self._vmm_running():
                if agent is not None:
                    agent.close()
                raise self._vmm_failed(stderr_path)
            if agent is None:
                if not sock_path.exists():
                    time.sleep(0.05)
                    continue
                try:
                    agent = SocketAgent(sock_path, name=self.label, connect_timeout=2)
                except AgentError:
                    continue
            try:
                reply = agent.ping(timeout=min(1.0, max(0.05, deadline - time.monotonic())))
                self.guest_uptime_at_ready = reply.get("uptime_s")
                return agent
            except AgentError as exc:
                if "closed" in str(exc) or "lost" in str(exc):
                    agent.close()
                    agent = None
                    time.sleep(0.1)
        if agent is not None:
            agent.close()
        if not self._vmm_running():
            raise self._vmm_failed(stderr_path)
        log = self._keep_console()
        raise GuestBootError(
            f"{self.label}: the guest agent did not answer within "
            f"{self.values['boot_timeout']:.0f} s; console log: {log}", log)


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
            guardian.cleanup(self._manifest)
        if self._topology is not None:
            self._topology.delete()
            self._topology = None
        if self.ns is not None:
            self.ns.delete()
        self._net = None
        self._scratch_dir = None
        self._scratch_dev = None
        if self._guardian is not None:
            try:
                os.write(self._guardian_fd, b"done")
            except OSError:
                pass
            os.close(self._guardian_fd)
            try:
                self._guardian.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._guardian.kill()
            self._guardian = None
        self.proc = None
        self.workdir = None
        self.ns = None

    # -- the VMM process: QEMU started here (a libvirt domain overrides these) ----------
    def _vmm_running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _vmm_wait(self, timeout: float) -> None:
        """Wait for the VMM to end by itself; subprocess.TimeoutExpired if it does not."""
        if self.proc is not None:
            self.proc.wait(timeout=timeout)

    def _vmm_end(self) -> None:
        """End the VMM (QMP quit, then kill) and let go of its monitor."""
        if self._vmm_running() and self.qmp is not None:
            try:
                self.qmp.command("quit")
                self.proc.wait(timeout=5)
            except (AgentError, OSError, subprocess.TimeoutExpired, ValueError):
                pass
        if self.qmp is not None:
            self.qmp.close()
            self.qmp = None
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def pause(self) -> None:
        if self.qmp is not None:
            self.paused = True       # before the command: a failed `stop` may still have paused
            self.qmp.command("stop")

    def resume(self) -> None:
        if self.qmp is not None:
            self.qmp.command("cont")
            self.paused = False

    def is_alive(self) -> bool:
        return self._vmm_running()

    def lost_reason(self) -> str:
        if self.proc is None:
            return "QEMU is not running"
        if self.proc.poll() is None:
            return "the guest agent stopped answering (QEMU still running)"
        return describe_loss(self.proc.returncode, self._console_text())

    def _console_text(self) -> str:
        """The guest's serial console so far ("" before it exists)."""
        if self.console_log is not None and self.console_log.exists():
            return self.console_log.read_text(errors="replace")
        return ""

    def vcpu_threads(self) -> list[int]:
        """Host thread ids of the guest's vCPUs (QMP query-cpus-fast), once per boot."""
        if self._vcpu_tids is None:
            from ...pinning import vcpu_threads
            if self.qmp is None:
                return []
            self._vcpu_tids = vcpu_threads(self.qmp.command("query-cpus-fast"))
        return list(self._vcpu_tids)

    def pin_targets(self, bench, params: dict) -> list[tuple[int, int]] | None:
        if self.qmp is None:
            return None
        return [(tid, 1) for tid in self.vcpu_threads()]

