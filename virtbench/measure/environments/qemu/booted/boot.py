"""The parts of a guest's boot that do not depend on who runs its VMM (QEMU itself, or
libvirtd): its scratch disk, the wait for its agent's first answer, a clean power-off, and
the serial console kept when the guest never answers."""
from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from .....machinery.kernels import build as kernels
from .....core.errors import AgentError, EnvironmentUnusable
from .....machinery.host.watch import WorkDir
from .....machinery.agent.transport import SocketAgent


NFS_EXPORT = "nfs"                # the directory backing=nfs exports (qemu/netdisk.py)


class GuestBootError(EnvironmentUnusable):
    """The guest never answered, or ended (reset, power-off, panic) before it did;
    `console_log` is the kept serial console."""

    def __init__(self, message: str, console_log: Path | None = None):
        super().__init__(message)
        self.console_log = console_log


def make_scratch(values: dict, work: WorkDir) -> tuple[str, str]:
    """The scratch disk (scratch=SIZE, backing=raw|qcow2|device|nbd|nfs) in the work directory:
    (its path or loop device, its format). A loop device is listed in the manifest."""
    size, backing = values["scratch"], values["backing"]
    if backing == "qcow2":
        path = work.path / "scratch.qcow2"
        proc = subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(path), size],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            raise EnvironmentUnusable(f"qemu-img create failed: {proc.stderr.strip()}")
        return str(path), "qcow2"
    path = work.path / "scratch.raw"
    if backing == "nfs":          # alone in the directory the NFS server exports
        path = work.path / NFS_EXPORT / "scratch.raw"
        path.parent.mkdir(mode=0o700)
    subprocess.run(["truncate", "-s", size, str(path)], check=True, timeout=30)
    if backing != "device":       # raw, or the raw file a server exports (nbd, nfs)
        return str(path), "raw"
    proc = subprocess.run(["losetup", "--find", "--show", str(path)],
                          capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise EnvironmentUnusable(f"backing=device: losetup failed: {proc.stderr.strip()}")
    loop = proc.stdout.strip()
    work.add("loops", loop)
    return loop, "raw"


def make_root_overlay(image: Path, work: WorkDir) -> Path:
    """A qcow2 overlay of the cached image in the work directory: the guest writes there,
    never to the image (as snapshot=on), and a second QEMU of the same guest (a restore, a
    migration's destination) opens the same file."""
    overlay = work.path / "root.qcow2"
    proc = subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw",
                           "-b", str(image), str(overlay)],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise EnvironmentUnusable(f"qemu-img create (root overlay) failed: "
                                  f"{proc.stderr.strip()}")
    return overlay


def scratch_backing(values: dict, work: WorkDir | None) -> str | None:
    """The host file (raw or qcow2 image) or loop device behind the scratch disk."""
    if work is None:
        return None
    if values["backing"] == "device":
        loops = work.data.get("loops") or []
        return loops[-1] if loops else None
    if values["backing"] == "nfs":      # the file the NFS server exports
        return str(work.path / NFS_EXPORT / "scratch.raw")
    name = "scratch.qcow2" if values["backing"] == "qcow2" else "scratch.raw"
    return str(work.path / name)


def wait_for_agent(vmm, sock_path: Path, label: str,
                   timeout: float) -> tuple[SocketAgent, float | None]:
    """The guest agent on `sock_path` once it answers a ping, and the guest's uptime then.
    `vmm` (QemuProcess or a libvirt domain's) says whether the guest still runs and why it
    ended; a guest that never answers is GuestBootError with its console kept."""
    deadline = vmm.started_at + timeout
    agent = None
    while time.monotonic() < deadline:
        if not vmm.running():
            if agent is not None:
                agent.close()
            raise ended(vmm, label)
        if agent is None:
            if not sock_path.exists():
                time.sleep(0.05)
                continue
            try:
                agent = SocketAgent(sock_path, name=label, connect_timeout=2)
            except AgentError:
                continue
        try:
            reply = agent.ping(timeout=min(1.0, max(0.05, deadline - time.monotonic())))
            return agent, reply.get("uptime_s")
        except AgentError as exc:
            if "closed" in str(exc) or "lost" in str(exc):
                agent.close()
                agent = None
                time.sleep(0.1)
    if agent is not None:
        agent.close()
    if not vmm.running():
        raise ended(vmm, label)
    log = keep_console(vmm.console_log, label)
    raise GuestBootError(f"{label}: the guest agent did not answer within {timeout:.0f} s; "
                         f"console log: {log}", log)


def ended(vmm, label: str) -> EnvironmentUnusable:
    """The VMM ended before the agent answered: why (vmm.failed()), with its console kept.
    A QEMU that printed nothing ended because its guest did (a reset, a power-off, a panic):
    that is the guest failing to boot, GuestBootError, as a guest that never answers is."""
    exc = vmm.failed()
    log = keep_console(getattr(vmm, "console_log", None), label)
    if log is None:
        return exc
    if isinstance(exc, GuestBootError):
        return GuestBootError(f"{exc}; console log: {log}", log)
    return EnvironmentUnusable(f"{exc}; console log: {log}")


def keep_console(console_log: Path | None, label: str) -> Path | None:
    """A copy of the serial console in the cache's logs (the 20 newest are kept)."""
    if console_log is None or not console_log.exists():
        return None
    logs = kernels.cache_dir() / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    safe = label.replace("/", "_")
    dest = logs / f"{time.strftime('%Y%m%d-%H%M%S')}-{safe}-console.log"
    shutil.copy2(console_log, dest)
    for old in sorted(logs.glob("*-console.log"))[:-20]:  # keep the 20 newest
        old.unlink(missing_ok=True)
    return dest


def power_off(agent, vmm) -> None:
    """A clean power-off (sysrq o; -no-reboot, or libvirt's on_poweroff, ends the VMM), waited
    for a few seconds. Never through a paused guest's frozen agent: the VMM's end does it."""
    if vmm.paused or not vmm.running():
        return
    try:
        agent.exec(["sh", "-c", "(sleep 0.1; echo o > /proc/sysrq-trigger) "
                                ">/dev/null 2>&1 </dev/null &"], timeout=5)
        vmm.wait(5)
    except (AgentError, subprocess.TimeoutExpired, OSError):
        pass
