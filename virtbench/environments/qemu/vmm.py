"""The VMM process of a Qemu environment: is it running, pause/resume over QMP, how it ended,
its vCPU threads (a mixin of Qemu; a libvirt domain overrides these with libvirt's calls)."""
from __future__ import annotations

import subprocess

from ...errors import AgentError
from .process import describe_loss


class QemuVmm:
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
