"""Network namespaces holding the tap device of a guest NIC and the host-side peer address.

Nothing here touches the host's own interfaces: the tap lives inside a namespace
`vb-<short id>` that virtbench creates, QEMU is started inside it (`ip netns exec`), and the
host-side address (the iperf3 server / scp target of network benchmarks) is on the tap in
that namespace. Run the peer with `ns.exec_argv([...])`.

Every namespace has an owner file `/run/virtbench/netns/<name>` ("<pid> <starttime>");
`sweep_stale()` deletes any `vb-*` namespace whose owner is gone.
"""
from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from pathlib import Path

from .. import workroot
from ....core.errors import VirtbenchError

PREFIX = "vb-"
OWNERS = Path("/run/virtbench/netns")
HOST_ADDR = "10.213.0.1/24"
GUEST_ADDR = "10.213.0.2/24"
TAP = "tap0"


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    ip = shutil.which("ip") or "/usr/sbin/ip"
    proc = subprocess.run([ip, *args], capture_output=True, text=True, timeout=30)
    if check and proc.returncode != 0:
        last = (proc.stderr.strip() or "(no output)").splitlines()[-1]
        raise VirtbenchError(f"ip {' '.join(args)} failed: {last}")
    return proc


def process_start_time(pid: int) -> str | None:
    """The start time of a process (field 22 of /proc/PID/stat), None if it does not exist."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def owner_alive(text: str) -> bool:
    """Is the owner recorded as "<pid> <starttime>" still the same running process?"""
    parts = text.split()
    if len(parts) != 2 or not parts[0].isdigit():
        return False
    return process_start_time(int(parts[0])) == parts[1]


def list_namespaces() -> list[str]:
    if not shutil.which("ip") and not Path("/usr/sbin/ip").exists():
        return []
    out = _ip("netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def delete(name: str) -> None:
    """Delete a namespace (its tap goes with it) and its owner file; quiet if already gone."""
    if name in list_namespaces():
        _ip("netns", "delete", name, check=False)
    try:
        (OWNERS / name).unlink()
    except OSError:
        pass


def add_host_tap(name: str) -> None:
    """A tap in the root namespace, down and without an address, for a VMM that a daemon
    starts (libvirtd) to open by name; NetNS.create(adopt_tap=name) then moves it away."""
    _ip("tuntap", "add", "dev", name, "mode", "tap")


def delete_host_tap(name: str) -> None:
    """Remove a tap add_host_tap() made if it is still in the root namespace; quiet if not."""
    _ip("link", "delete", name, check=False)


def sweep_stale() -> list[str]:
    """Delete every vb-* namespace whose owning virtbench process is dead; return their names."""
    removed = []
    for name in list_namespaces():
        if not name.startswith(PREFIX):
            continue
        try:
            owner = (OWNERS / name).read_text()
        except OSError:
            owner = ""
        if not owner_alive(owner):
            delete(name)
            removed.append(name)
    return removed


class NetNS:
    """A namespace with a tap device and the host-side (peer) address on it.

    create() / delete() or use it as a context manager; delete() is idempotent.
    """

    def __init__(self, name: str | None = None, host_addr: str = HOST_ADDR,
                 guest_addr: str = GUEST_ADDR, tap: str = TAP, multi_queue: bool = False):
        self.name = name or PREFIX + secrets.token_hex(3)
        self.multi_queue = multi_queue   # a tap a multiqueue virtio-net opens once per queue
        self.host_addr = host_addr
        self.guest_addr = guest_addr
        self.tap = tap
        self.created = False

    @property
    def host_ip(self) -> str:
        return self.host_addr.split("/")[0]

    @property
    def guest_ip(self) -> str:
        return self.guest_addr.split("/")[0]

    def create(self, adopt_tap: str | None = None) -> "NetNS":
        """Make the namespace and its tap. `adopt_tap`: instead of a new tap, move in this
        existing one from the root namespace (one a QEMU started by libvirtd already holds
        open) and rename it to `self.tap`."""
        if os.geteuid() != 0:
            raise VirtbenchError("network namespaces need root; run virtbench as root")
        if not shutil.which("ip") and not Path("/usr/sbin/ip").exists():
            raise VirtbenchError("ip not found; install it with: apt-get install iproute2")
        OWNERS.mkdir(parents=True, exist_ok=True, mode=0o755)
        workroot.check_dir(OWNERS, "namespace owners directory")
        # the owner file first, so a sweep never mistakes a namespace being built for a stale one
        (OWNERS / self.name).write_text(f"{os.getpid()} {process_start_time(os.getpid())}\n")
        self.created = True
        try:
            _ip("netns", "add", self.name)
            _ip("-n", self.name, "link", "set", "lo", "up")
            if adopt_tap:
                _ip("link", "set", adopt_tap, "netns", self.name)
                _ip("-n", self.name, "link", "set", adopt_tap, "name", self.tap)
            else:
                _ip("-n", self.name, "tuntap", "add", "dev", self.tap, "mode", "tap",
                    *(["multi_queue"] if self.multi_queue else []))
            _ip("-n", self.name, "addr", "add", self.host_addr, "dev", self.tap)
            _ip("-n", self.name, "link", "set", self.tap, "up")
        except BaseException:
            self.delete()
            raise
        return self

    def exec_argv(self, argv: list[str]) -> list[str]:
        """`argv` wrapped to run inside the namespace."""
        ip = shutil.which("ip") or "/usr/sbin/ip"
        return [ip, "netns", "exec", self.name, *argv]

    def run(self, argv: list[str], timeout: float = 60, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(self.exec_argv(argv), timeout=timeout, **kw)

    def exists(self) -> bool:
        return self.name in list_namespaces()

    def delete(self) -> None:
        if self.created:
            delete(self.name)
            self.created = False

    def __enter__(self) -> "NetNS":
        return self.create()

    def __exit__(self, *exc) -> None:
        self.delete()
