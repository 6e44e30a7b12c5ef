"""Process hygiene: QEMU dies with us (PDEATHSIG), live guests are stopped at exit and on
SIGTERM/SIGHUP, what dead virtbench processes left is swept, and whether a QEMU still lives."""
from __future__ import annotations

import atexit
import os
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ... import netns
from ...guest import watch

if TYPE_CHECKING:
    from .environment import Qemu

live: set["Qemu"] = set()
live_lock = threading.Lock()


def _stop_all() -> None:
    for env in list(live):
        try:
            env.stop()
        except Exception:
            pass


atexit.register(_stop_all)


def _on_signal(signum, frame):  # SIGTERM/SIGHUP: clean up, then die as the signal would
    _stop_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def install_signal_handlers() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) in (signal.SIG_DFL, None):
            signal.signal(sig, _on_signal)


def sweep_stale() -> None:
    """Remove what dead virtbench processes left: vb-* namespaces, vbqemu-* work directories,
    and the private directories (exit-profile sockets, bare metal's scratch, sshd keys, ssh
    control sockets, short-lived files) of dead owners."""
    netns.sweep_stale()
    watch.sweep(("vbqemu-", *watch.PRIVATE_PREFIXES))


def is_qemu_alive(pid: int) -> bool:
    """Is `pid` a running (not zombie) QEMU process?"""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z" and b"qemu" in cmdline


def describe_loss(returncode: int | None, console: str) -> str:
    """Pure: why a guest went away, from QEMU's exit status and the serial console."""
    if returncode is None:
        how = "QEMU is still running"
    elif returncode < 0:
        how = f"QEMU was killed (signal {-returncode})"
    else:
        how = f"QEMU exited (status {returncode})"
    panic = guest_panic(console)
    return f"{how}; {panic}" if panic else how


def guest_panic(console: str) -> str | None:
    """Pure: the guest kernel's last panic line on its serial console ("guest Kernel panic -
    not syncing: ..."), or None."""
    panic = [line.strip() for line in console.splitlines() if "Kernel panic" in line]
    return f"guest {panic[-1][panic[-1].index('Kernel panic'):]}" if panic else None
