"""Targets that are really remote from virtbench's point of view, for the `ssh` tests.

- `VethLink`: a veth pair from the root namespace (where virtbench and its ssh client run)
  into a namespace we made: root side 10.214.N.1/30, namespace side 10.214.N.2/30, N picked
  so that no address or route of the root namespace already uses 10.214.N.
- `RemoteHost`: a second machine: an sshd (its own host key, one authorized client key) in a
  fresh network namespace behind a `VethLink`, with a private /tmp and /var/tmp (its own mount
  namespace, a tmpfs each), so what virtbench stages there is invisible from here and goes
  with the target, as on another machine.

Nothing touches the host's own interfaces: the namespace gets an owner file (a crashed test
run's namespace is swept like a crashed virtbench's), the root end of the veth goes away with
the namespace, processes left in the namespace are stopped by their PIDs.
"""
from __future__ import annotations

import os
import random
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from virtbench.machinery.host.net import netns, netpath
from virtbench.machinery.host.net.sshd import Sshd

NET = "10.214.{}.{}"
PRIVATE_TMP = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
               'mount -t tmpfs -o size=256m,mode=1777 vbtarget /tmp && '
               'mount -t tmpfs -o size=256m,mode=1777 vbtarget /var/tmp && exec "$@"', "sh"]


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30,
                          check=check)


def used_octets() -> set[int]:
    """Third octets of 10.214.x.y addresses and routes the root namespace already has."""
    text = ip("-4", "-o", "addr").stdout + ip("-4", "route").stdout
    return {int(part.split(".")[2]) for part in text.split() if part.startswith("10.214.")}


def free_octet(attempts: int = 50) -> int:
    used = used_octets()
    for _ in range(attempts):
        n = random.randint(1, 254)
        if n not in used:
            return n
    raise RuntimeError("no free 10.214.N.0/30 subnet in the root namespace")


def link_exists(dev: str) -> bool:
    return ip("link", "show", "dev", dev, check=False).returncode == 0


class VethLink:
    """A veth pair: `root_dev` in the root namespace, `ns_dev` in namespace `ns`."""

    def __init__(self, ns: str, ns_dev: str = "vbt0"):
        self.ns, self.ns_dev = ns, ns_dev
        self.root_dev = "vbt" + secrets.token_hex(4)          # 11 characters
        self.octet = free_octet()
        self.root_ip, self.ns_ip = NET.format(self.octet, 1), NET.format(self.octet, 2)
        ip("link", "add", self.root_dev, "type", "veth", "peer", "name", ns_dev, "netns", ns)
        try:
            ip("addr", "add", f"{self.root_ip}/30", "dev", self.root_dev)
            ip("-n", ns, "addr", "add", f"{self.ns_ip}/30", "dev", ns_dev)
            ip("link", "set", self.root_dev, "up")
            ip("-n", ns, "link", "set", ns_dev, "up")
        except BaseException:
            self.delete()
            raise

    def counters(self) -> int:
        """Bytes the root end has received plus sent."""
        stats = Path("/sys/class/net") / self.root_dev / "statistics"
        return sum(int((stats / f).read_text()) for f in ("rx_bytes", "tx_bytes"))

    def delete(self) -> None:
        if link_exists(self.root_dev):
            ip("link", "del", self.root_dev, check=False)


def ns_pids(name: str) -> list[int]:
    out = ip("netns", "pids", name, check=False).stdout
    return [int(p) for p in out.split() if p.isdigit()]


def stop_pids(pids: list[int], wait_s: float = 5.0) -> None:
    """TERM the given processes, KILL what is still there after `wait_s` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
            time.sleep(0.05)


class RemoteHost:
    """sshd at `address`:22 in namespace `ns` behind a veth; `peer` is the root end."""

    def __init__(self):
        self.ns = netns.PREFIX + secrets.token_hex(3) + "-t"
        self.link: VethLink | None = None
        self.sshd: Sshd | None = None
        self.keys: str | None = None
        netpath._add_ns(self.ns)
        try:
            self.link = VethLink(self.ns)
            # not in the target's private /tmp or /var/tmp: its sshd and our client read them
            self.keys = tempfile.mkdtemp(prefix="vb-target-", dir="/run")
            prefix = netns.NetNS(self.ns).exec_argv(PRIVATE_TMP)
            self.sshd = Sshd(self.link.ns_ip, prefix, port=22, directory=self.keys)
        except BaseException:
            self.close()
            raise

    @property
    def address(self) -> str:
        return self.link.ns_ip

    @property
    def peer(self) -> str:
        return self.link.root_ip

    @property
    def pid(self) -> int:
        return self.sshd.server.proc.pid

    def write_known_hosts(self, path: Path) -> Path:
        path.write_text(self.sshd.known_hosts_line())
        return path

    def spec(self, known_hosts: Path, name: str = "remote", peer: bool = True) -> str:
        spec = (f"ssh:host={self.address},key={self.sshd.identity},known_hosts={known_hosts},"
                f"name={name}")
        return spec + (f",peer={self.peer}" if peer else "")

    def target_tmp(self, directory: str = "/tmp") -> list[str]:
        """The names in the target's own /tmp or /var/tmp (its private mount namespace)."""
        out = subprocess.run(["nsenter", "-t", str(self.pid), "-m", "ls", "-A", directory],
                             capture_output=True, text=True, timeout=30, check=True)
        return out.stdout.split()

    def sessions(self, wait_s: float = 10.0) -> list[int]:
        """Processes in the namespace other than the listening sshd, after waiting up to
        `wait_s` seconds for them to end (a closed connection's sshd exits shortly after)."""
        deadline = time.monotonic() + wait_s
        while True:
            others = [p for p in ns_pids(self.ns) if p != self.pid]
            if not others or time.monotonic() > deadline:
                return others
            time.sleep(0.1)

    def close(self) -> None:
        """Stop everything in the namespace by PID, then the sshd, the namespace (the veth
        goes with it) and the key directory. Idempotent; never raises on what is gone."""
        if self.ns in netns.list_namespaces():
            stop_pids([p for p in ns_pids(self.ns) if self.sshd is None or p != self.pid])
        if self.sshd is not None:
            self.sshd.stop()
        netns.delete(self.ns)
        if self.link is not None:
            self.link.delete()
        if self.keys is not None:
            shutil.rmtree(self.keys, ignore_errors=True)

    def __enter__(self) -> "RemoteHost":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
