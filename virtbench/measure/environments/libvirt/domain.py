"""A transient domain libvirtd runs, as the VMM of a guest virtbench defines: the collaborator
a DefinedDomain has where the qemu kind has its QemuProcess, with the same methods (running,
wait, end, failed, pause, resume, lost_reason, vCPU threads), each through libvirt."""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from ....core.errors import EnvironmentUnusable
from ..qemu.vmm.hygiene import guest_panic
from ..qemu.vmm.process import console_text
from .api import binding, describe_error, domain_state_words, resume_domain, suspend_domain


class DomainVmm:
    """One transient domain, from create() to end()."""

    qmp = None                 # libvirtd holds the monitor: no QMP of ours
    argv: list[str] = []       # nor a command line of ours

    def __init__(self, label: str, workdir: Path, uri: str):
        self.label, self.uri = label, uri
        self.console_log = workdir / "console.log"
        self.dom = None          # the domain (virDomain), once created
        self.started_at: float | None = None
        self.paused = False
        self._vcpu_tids: list[int] | None = None

    def create(self, conn, domain_xml: str) -> None:
        """libvirtd starts the domain (transient: gone once it is off)."""
        libvirt = binding()
        self.started_at = time.monotonic()
        try:
            self.dom = conn.createXML(domain_xml, 0)
        except libvirt.libvirtError as exc:
            raise EnvironmentUnusable(f"{self.label}: libvirt did not start the domain: "
                                      f"{describe_error(self.uri, exc)}") from None

    def connect(self) -> None:
        """Nothing to connect: libvirt is the monitor."""

    @property
    def pid(self) -> int | None:
        return None

    def process_id(self) -> int | None:
        """libvirtd's QEMU for this domain: the process its vCPU threads belong to."""
        try:
            tids = self.vcpu_threads()
        except (binding().libvirtError, ImportError, KeyError, ValueError):
            return None
        for tid in tids:
            try:
                status = Path(f"/proc/{tid}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("Tgid:"):
                    return int(line.split()[1])
        return None

    def running(self) -> bool:
        if self.dom is None:
            return False
        try:
            return bool(self.dom.isActive())
        except binding().libvirtError:
            return False        # a transient domain that ended is gone altogether

    def wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self.running():
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired("libvirt domain", timeout)
            time.sleep(0.1)

    def failed(self) -> EnvironmentUnusable:
        return EnvironmentUnusable(f"{self.label}: the domain ended while booting: "
                                   f"{self.lost_reason()}")

    def end(self) -> None:
        """Destroy the domain (a transient one is then gone), and forget it."""
        if self.running():
            try:
                self.dom.destroy()
            except binding().libvirtError:
                pass
        self.dom = None
        self.paused = False
        self._vcpu_tids = None

    def pause(self) -> None:
        """virDomainSuspend: the domain stops while another environment measures."""
        suspend_domain(self)

    def resume(self) -> None:
        resume_domain(self)

    def lost_reason(self) -> str:
        if self.dom is None:
            return "the domain is not running"
        libvirt = binding()
        try:
            state, reason = self.dom.state()
            how = f"the domain is {domain_state_words(libvirt, state, reason)}"
        except libvirt.libvirtError:
            how = "the domain is gone (a transient domain that ended)"
        panic = guest_panic(console_text(self.console_log))
        return f"{how}; {panic}" if panic else how

    def vcpu_threads(self) -> list[int]:
        """Host thread ids of the vCPUs, through libvirt's QEMU monitor passthrough."""
        if self._vcpu_tids is None:
            if self.dom is None:
                return []
            from ....machinery.host.pinning import vcpu_threads
            import libvirt_qemu
            reply = libvirt_qemu.qemuMonitorCommand(
                self.dom, json.dumps({"execute": "query-cpus-fast"}), 0)
            self._vcpu_tids = vcpu_threads(json.loads(reply)["return"])
        return list(self._vcpu_tids)

    def pin_threads(self) -> list[tuple[int, int]] | None:
        if self.dom is None:
            return None
        try:
            return [(tid, 1) for tid in self.vcpu_threads()]
        except (binding().libvirtError, ImportError, KeyError, ValueError):
            return None
