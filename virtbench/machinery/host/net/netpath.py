"""Network paths for network benchmarks, built from namespaces and veth pairs virtbench owns.

- native: the environment's end is a namespace `vb-<id>-e` joined by veth to a host-side
  namespace `vb-<id>-h`, so bare metal's baseline crosses the same kind of kernel path a
  guest's traffic crosses after its virtual NIC, minus the NIC.
- any kind: a remote namespace `vb-<id>-r` one veth hop behind the host side, with
  forwarding on, stands for a second machine (the Zhang study's ping decomposition).

Every namespace gets an owner file (see netns.py), so a crashed run's leftovers are swept.
Nothing here touches the host's own interfaces.
"""
from __future__ import annotations

import os
import secrets
import subprocess
import time

from . import netns
from ....core.errors import VirtbenchError
from ..executor import LOCAL, HostExecutor
from .netpath_types import NetPath

# Subnets inside our own namespaces only; never routed anywhere else. Instance i of a group
# gets 10.215.i.0/24, so two instances' paths can be joined without an address clash.
NATIVE_NET = "10.215.{}.{}"                 # .1 host side, .2 environment side
REMOTE_NET = ("10.216.0.1", "10.216.0.2")   # host side, remote
PAIR_NET = ("10.217.0.1", "10.217.0.2")     # instance 0's host side, instance 1's host side


def _own(name: str) -> None:
    netns.OWNERS.mkdir(parents=True, exist_ok=True)
    (netns.OWNERS / name).write_text(f"{os.getpid()} {netns.process_start_time(os.getpid())}\n")


def _add_ns(name: str) -> None:
    _own(name)
    netns._ip("netns", "add", name)
    netns._ip("-n", name, "link", "set", "lo", "up")


def _veth(ns_a: str, dev_a: str, addr_a: str, ns_b: str, dev_b: str, addr_b: str) -> None:
    """A veth pair created inside ns_a (so no end ever appears in the host's namespace)."""
    netns._ip("-n", ns_a, "link", "add", dev_a, "type", "veth", "peer", "name", dev_b)
    netns._ip("-n", ns_a, "link", "set", dev_b, "netns", ns_b)
    netns._ip("-n", ns_a, "addr", "add", f"{addr_a}/24", "dev", dev_a)
    netns._ip("-n", ns_b, "addr", "add", f"{addr_b}/24", "dev", dev_b)
    netns._ip("-n", ns_a, "link", "set", dev_a, "up")
    netns._ip("-n", ns_b, "link", "set", dev_b, "up")


def _exec_prefix(name: str) -> list[str]:
    return netns.NetNS(name).exec_argv([])


class Topology:
    """The namespaces one environment's network path is made of; delete() removes them all."""

    def __init__(self):
        self.names: list[str] = []

    def add(self, name: str) -> str:
        self.names.append(name)
        _add_ns(name)
        return name

    def delete(self) -> None:
        for name in reversed(self.names):
            netns.delete(name)
        self.names.clear()


def add_remote(topo: Topology, host_ns: str, name: str) -> tuple[str, list[str]]:
    """A remote namespace `name` one veth hop behind `host_ns`, which forwards between it and
    the environment; returns (the remote's address, its exec prefix)."""
    remote = topo.add(name)
    _veth(host_ns, "vbr0", REMOTE_NET[0], remote, "vbr1", REMOTE_NET[1])
    netns._ip("-n", remote, "route", "add", "default", "via", REMOTE_NET[0])
    netns.NetNS(host_ns).run(["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"], check=True,
                             capture_output=True)
    return REMOTE_NET[1], _exec_prefix(remote)


def native_path(topo: Topology, index: int = 0) -> NetPath:
    """Two namespaces over veth (plus the remote): bare metal's network baseline."""
    base = netns.PREFIX + secrets.token_hex(3)
    env_ns = topo.add(base + "-e")
    host_ns = topo.add(base + "-h")
    host_addr, env_addr = NATIVE_NET.format(index, 1), NATIVE_NET.format(index, 2)
    _veth(host_ns, "vbh0", host_addr, env_ns, "vbe0", env_addr)
    netns._ip("-n", env_ns, "route", "add", "default", "via", host_addr)
    remote_addr, remote_prefix = add_remote(topo, host_ns, base + "-r")
    return NetPath(env_address=env_addr, host_address=host_addr,
                   host_prefix=_exec_prefix(host_ns), env_prefix=_exec_prefix(env_ns),
                   remote_address=remote_addr, remote_prefix=remote_prefix, nic="veth")


def _subnet(address: str) -> str:
    return address.rsplit(".", 1)[0] + ".0/24"


def join_hosts(ns_a: str, env_a: str, ns_b: str, env_b: str) -> None:
    """Join two environments' host-side namespaces by veth and route each environment's
    subnet through it, so environment A reaches environment B across both host sides
    (guest -> tap -> host side A -> veth -> host side B -> tap -> guest)."""
    if _subnet(env_a) == _subnet(env_b):
        raise ValueError(f"both environments are on {_subnet(env_a)}: nothing to route")
    _veth(ns_a, "vbg0", PAIR_NET[0], ns_b, "vbg1", PAIR_NET[1])
    netns._ip("-n", ns_a, "route", "add", _subnet(env_b), "via", PAIR_NET[1])
    netns._ip("-n", ns_b, "route", "add", _subnet(env_a), "via", PAIR_NET[0])
    for ns in (ns_a, ns_b):
        netns.NetNS(ns).run(["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"], check=True,
                            capture_output=True)


class HostServer:
    """A server run on the host through a namespace's exec prefix (iperf3, sockperf, a private
    sshd), ready once its port listens, always stopped. Bounded: it must listen within
    `ready_timeout` seconds or it is killed. `host` starts it and asks `ss` (a test's fake)."""

    def __init__(self, argv: list[str], port: int, prefix: list[str], ready_timeout: float = 10,
                 host: HostExecutor = LOCAL):
        self.name = os.path.basename(argv[0])
        self.host = host
        self.proc = host.popen(prefix + argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               start_new_session=True)
        deadline = time.monotonic() + ready_timeout
        while not self._listening(prefix, port):
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace").strip().splitlines()
                self.stop()
                raise VirtbenchError(f"{self.name} exited: {err[-1] if err else 'no output'}")
            if time.monotonic() > deadline:
                self.stop()
                raise VirtbenchError(f"{self.name} not listening on port {port} in time")
            time.sleep(0.05)

    def _listening(self, prefix: list[str], port: int) -> bool:
        out = self.host.run(prefix + ["ss", "-H", "-ltnu", f"sport = :{port}"], timeout=10)
        return bool(out.stdout.strip())

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
