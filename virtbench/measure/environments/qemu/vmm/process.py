"""The VMM of a qemu guest, a collaborator the environment owns: the QEMU process virtbench
runs itself (in the guest's network namespace, dying with us), its QMP monitor, pause and
resume, how it ended, its vCPU threads. A libvirt domain has another VMM with the same
methods (libvirt/domain.py DomainVmm): libvirtd runs its QEMU."""
from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

from .....core.errors import AgentError, EnvironmentUnusable
from .....machinery.host.executor import die_with_parent
from ..booted.boot import GuestBootError
from .hygiene import describe_loss, ended_while_booting
from .qmp import Qmp
from .version import parse_qmp_version


def console_text(console_log: Path | None) -> str:
    """The guest's serial console so far ("" before it exists)."""
    if console_log is not None and console_log.exists():
        return console_log.read_text(errors="replace")
    return ""


class QemuProcess:
    """One QEMU process and its monitor, from launch() to end()."""

    def __init__(self, label: str, workdir: Path):
        self.label = label
        self.console_log = workdir / "console.log"
        self.qmp_socket = workdir / "qmp.sock"
        self.stderr_path = workdir / "qemu.stderr"
        self.workdir = workdir
        self.argv: list[str] = []
        self.proc: subprocess.Popen | None = None
        self.qmp: Qmp | None = None
        self.started_at: float | None = None
        self.paused = False
        self._vcpu_tids: list[int] | None = None

    def launch(self, argv: list[str], exec_prefix: list[str],
               env_extra: dict[str, str] | None = None) -> int:
        """Start QEMU under `exec_prefix` (`ip netns exec NS`, which execs it: same pid);
        its pid. `env_extra`: variables another QEMU needs ($QEMU_MODULE_DIR)."""
        self.argv = list(argv)
        env = dict(os.environ, **(env_extra or {}), TMPDIR=str(self.workdir))  # snapshot=on's overlay lands here
        self.started_at = time.monotonic()
        with open(self.stderr_path, "wb") as err:
            # PR_SET_PDEATHSIG fires when the *thread* that forked exits, and preexec_fn is
            # unsafe in threads: use it from the main thread only (the guardian covers both)
            main = threading.current_thread() is threading.main_thread()
            self.proc = subprocess.Popen(exec_prefix + self.argv, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=err, env=env,
                                         preexec_fn=die_with_parent if main else None,
                                         start_new_session=True)
        return self.proc.pid

    def connect(self) -> None:
        """The QMP monitor (once the guest answers: QEMU listens by then)."""
        self.qmp = Qmp(self.qmp_socket)

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def process_id(self) -> int | None:
        """The QEMU process's id (its memory is the guest's footprint)."""
        return self.pid if self.running() else None

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait(self, timeout: float) -> None:
        """Wait for the VMM to end by itself; subprocess.TimeoutExpired if it does not."""
        if self.proc is not None:
            self.proc.wait(timeout=timeout)

    def failed(self) -> EnvironmentUnusable:
        """Why QEMU ended while the guest booted: the last line it printed, or (it printed
        nothing: its guest reset, powered off or panicked) GuestBootError saying how it ended,
        with a guest panic from the console."""
        path = self.stderr_path
        text = path.read_text(errors="replace").strip() if path.exists() else ""
        if text:
            return EnvironmentUnusable(f"{self.label}: QEMU failed to start: "
                                       f"{text.splitlines()[-1]}")
        how = ended_while_booting(self.proc.returncode, console_text(self.console_log))
        return GuestBootError(f"{self.label}: QEMU failed to start: {how}")

    def end(self) -> None:
        """End QEMU (QMP quit, then kill) and let go of its monitor; then forget it."""
        if self.running() and self.qmp is not None:
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
        self.proc = None
        self.paused = False
        self._vcpu_tids = None

    def pause(self) -> None:
        if self.qmp is not None:
            self.paused = True       # before the command: a failed `stop` may still have paused
            self.qmp.command("stop")

    def resume(self) -> None:
        if self.qmp is not None:
            self.qmp.command("cont")
            self.paused = False

    def lost_reason(self) -> str:
        if self.proc is None:
            return "QEMU is not running"
        if self.proc.poll() is None:
            return "the guest agent stopped answering (QEMU still running)"
        return describe_loss(self.proc.returncode, console_text(self.console_log))

    def vcpu_threads(self) -> list[int]:
        """Host thread ids of the guest's vCPUs (QMP query-cpus-fast), once per boot."""
        if self._vcpu_tids is None:
            from .....machinery.host.pinning import vcpu_threads
            if self.qmp is None:
                return []
            self._vcpu_tids = vcpu_threads(self.qmp.command("query-cpus-fast"))
        return list(self._vcpu_tids)

    def pin_threads(self) -> list[tuple[int, int]] | None:
        if self.qmp is None:
            return None
        return [(tid, 1) for tid in self.vcpu_threads()]


def read_qmp_version(qmp) -> str | None:
    """The running QEMU's version as QMP `query-version` says it (None if it will not say)."""
    try:
        return parse_qmp_version(qmp.command("query-version"))
    except (AgentError, OSError, ValueError):
        return None
