"""Process hygiene of QEMU guests: what dead virtbench processes left is swept, whether a QEMU
still lives, and why a guest went away (pure). (QEMU dies with us through PDEATHSIG, process.py;
live guests are stopped at exit and on SIGTERM/SIGHUP by environments/live.py, as every
started environment is.)"""
from __future__ import annotations

from pathlib import Path

from .....machinery.host.net import netns
from .....machinery.host import watch


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


def ended_while_booting(returncode: int | None, console: str) -> str:
    """Pure: a QEMU that ended silently before its guest's agent answered. Status 0 without
    a panic is the guest resetting or powering off (virtbench runs QEMU with -no-reboot, so
    a reset, a triple fault included, ends it)."""
    how = describe_loss(returncode, console)
    if returncode == 0 and guest_panic(console) is None:
        how += ": the guest reset or powered off while booting (-no-reboot ends QEMU then)"
    return how


def guest_panic(console: str) -> str | None:
    """Pure: the guest kernel's last panic line on its serial console ("guest Kernel panic -
    not syncing: ..."), or None."""
    panic = [line.strip() for line in console.splitlines() if "Kernel panic" in line]
    return f"guest {panic[-1][panic[-1].index('Kernel panic'):]}" if panic else None
