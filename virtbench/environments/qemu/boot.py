"""The boot of a Qemu environment: its scratch disk, network namespace and QEMU process,
then the wait for the guest agent (a mixin of Qemu; the life cycle around it, start and
stop, is environment.py)."""
from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

from ... import kernels, netns
from ...errors import AgentError, EnvironmentUnusable
from ...transport import SocketAgent
from ...hostexec import die_with_parent
from . import version
from .argv import build_argv
from .qmp import Qmp
from .tunings import boot_args


class GuestBootError(EnvironmentUnusable):
    """The guest never answered; `console_log` is the kept serial console."""

    def __init__(self, message: str, console_log: Path | None = None):
        super().__init__(message)
        self.console_log = console_log


class QemuBoot:
    """Scratch disk, namespace, QEMU and the agent's first answer; stop() undoes them."""

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
