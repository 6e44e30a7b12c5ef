"""A second QEMU of a running guest's configuration, waiting for its state (`-incoming
defer`): a snapshot's restore or a live migration's destination. It runs in the guest's
namespace with its own monitor, agent socket and console in a subdirectory of the guest's
work directory; it is in the guest's resources (released before the first QEMU) and in its
manifest (`qemu_pids`: the guardian kills it if virtbench dies)."""
from __future__ import annotations

import time
from typing import Callable

from .....core.errors import AgentError, VirtbenchError
from ..cmdline.argv import build_argv
from ..vmm.qmp import Qmp
from ..vmm.process import QemuProcess

QMP_WAIT_S = 30.0
POLL_S = 0.02


def launch_second(env, tag: str, tap: str | None = None,
                  extra_argv: list[str] | tuple = ()) -> QemuProcess:
    """Start the second QEMU of `env` (a started qemu environment whose root disk is an
    overlay a second QEMU can open: shared_root) on `tap` (default: the guest's own, free
    only once its first QEMU is gone), and connect to its monitor."""
    if env.launch_cfg is None or not env.shared_root:
        raise VirtbenchError(f"{env.label}: a second QEMU needs a guest started with its "
                             "root disk in an overlay file (shared_root)")
    d = env.work.path / tag
    d.mkdir()
    vmm = QemuProcess(f"{env.label} ({tag})", d)
    env.resources.add(f"the {tag} QEMU", vmm.end)
    cfg = {**env.launch_cfg, "console_log": vmm.console_log, "qmp_socket": vmm.qmp_socket,
           "agent_socket": d / "agent.sock", "pidfile": d / "qemu.pid",
           "tap": tap or env.launch_cfg["tap"]}
    pid = vmm.launch(build_argv(cfg) + list(extra_argv) + ["-incoming", "defer"],
                     env.ns.exec_argv([]), cfg.get("qemu_env"))
    env.work.add("qemu_pids", pid)
    connect_monitor(vmm, QMP_WAIT_S)
    return vmm


def connect_monitor(vmm: QemuProcess, timeout: float) -> None:
    """vmm.qmp, once QEMU listens; the reason QEMU gave when it ends first."""
    deadline = time.monotonic() + timeout
    while True:
        if not vmm.running():
            raise vmm.failed()
        if vmm.qmp_socket.exists():
            try:
                vmm.qmp = Qmp(vmm.qmp_socket)
                return
            except (OSError, AgentError):
                pass
        if time.monotonic() > deadline:
            raise VirtbenchError(f"{vmm.label}: QEMU's monitor did not answer in {timeout:.0f} s")
        time.sleep(POLL_S)


def wait_for(poll: Callable[[], dict], done: Callable[[dict], bool], timeout: float,
             what: str, every: float = POLL_S) -> tuple[dict, float]:
    """Poll until `done(reply)`: (the reply, time.monotonic() when it was seen); a
    VirtbenchError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        reply = poll()
        now = time.monotonic()
        if done(reply):
            return reply, now
        if now > deadline:
            raise VirtbenchError(f"{what} did not finish in {timeout:.0f} s (last: "
                                 f"{reply.get('status', reply)})")
        time.sleep(every)


def migration_done(reply: dict) -> bool:
    return reply.get("status") in ("completed", "failed", "cancelled")


def query_migrate(vmm: QemuProcess) -> Callable[[], dict]:
    return lambda: vmm.qmp.command("query-migrate")


def incoming_done(vmm: QemuProcess) -> Callable[[], dict]:
    """The destination's run state: "inmigrate" until its state has arrived."""
    return lambda: vmm.qmp.command("query-status")


def send_file(vmm: QemuProcess, fd: int, name: str) -> None:
    """Hand QEMU an open file (getfd) for a migration to or from `fd:NAME`."""
    vmm.qmp.command("getfd", fd=fd, fdname=name)
