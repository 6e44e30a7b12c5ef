"""A domain the user already has, on any libvirt driver (KVM, Xen, VirtualBox, ESX): its life
cycle goes through libvirt (started if it was off, paused while another environment
measures, returned to the state it was found in), and benchmarks run in it over SSH, as the
`ssh` kind runs them (staged agent and kernels, remote time limits, nothing left behind)."""
from __future__ import annotations

import socket
import time

from ....core.capabilities import can
from ....core.errors import EnvironmentUnusable
from ....machinery.host.net.netpath_types import NetPath
from ..base import Environment, EnvSpec
from ..ssh import Ssh, over_ssh
from .api import (
    binding,
    describe_error,
    domain_state_words,
    open_connection,
    platform_of,
    resume_domain,
    suspend_domain,
)

SSH_KEYS = ("user", "port", "key", "known_hosts", "scratch", "peer")


def first_ipv4(interfaces: dict) -> str | None:
    """virDomainInterfaceAddresses' answer -> the first IPv4 address not on loopback (pure)."""
    for name, iface in sorted((interfaces or {}).items()):
        if name == "lo":
            continue
        for addr in iface.get("addrs") or []:
            if addr.get("type") == 0 and not str(addr.get("addr", "")).startswith("127."):
                return addr["addr"]
    return None


def _port_open(host: str, port: int, timeout: float) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


class ExistingDomain(Environment):
    """`libvirt:uri=URI,domain=NAME[,host=ADDR,user=..,port=..,key=..,known_hosts=..,...]`."""

    kind = "libvirt"

    def __init__(self, spec, options: dict):
        self.options = options
        super().__init__(spec)
        self.conn = None
        self.dom = None
        self.platform: str | None = None
        self.ssh: Ssh | None = None
        self.found_state: str | None = None   # what we found: "running", "paused", "off"
        self.paused = False

    @property
    def kind_label(self) -> str:
        what = f"libvirt-{self.platform}" if self.platform else "libvirt"
        return f"{what}/{self.values['domain']}"

    def _libvirt(self):
        return binding()

    def resolve(self) -> None:
        """Connect and find the domain; the label says its platform (from its XML)."""
        if self.conn is not None:
            return
        self.conn = open_connection(self.values["uri"])
        self.resources.add("the libvirt connection", self._close_connection)
        libvirt = self._libvirt()
        try:
            self.dom = self.conn.lookupByName(self.values["domain"])
            self.platform = platform_of(self.conn.getType(), self.dom.XMLDesc(0))
        except libvirt.libvirtError as exc:
            uri = self.values["uri"]
            self.stop()
            raise EnvironmentUnusable(
                f"environment {self.spec}: no domain {self.values['domain']} at {uri} "
                f"({str(exc).splitlines()[0]}); `virsh -c {uri} list --all` lists them") from None

    def _close_connection(self) -> None:
        self.dom = None
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn.close()
            except self._libvirt().libvirtError:
                pass

    # -- life cycle ----------------------------------------------------------------------
    def _state(self) -> tuple[int, int]:
        return tuple(self.dom.state())

    def launch(self) -> None:
        """Start or resume the domain as found (its state is restored at stop), then its
        SSH side once sshd answers on its address."""
        libvirt = self._libvirt()
        self.resources.add("the domain's state as found", self._restore)
        try:
            state, _ = self._state()
            if state == libvirt.VIR_DOMAIN_SHUTOFF:
                self.found_state = "off"
                self.dom.create()
            elif state == libvirt.VIR_DOMAIN_PAUSED:
                self.found_state = "paused"
                self.dom.resume()
            else:
                self.found_state = "running"
        except libvirt.libvirtError as exc:
            raise EnvironmentUnusable(f"{self.label}: could not start the domain: "
                                      f"{describe_error(self.values['uri'], exc)}") from None
        t0 = time.monotonic()
        host = self._address(t0 + self.values["boot_timeout"])
        self.ssh = Ssh(EnvSpec("ssh", self._ssh_options(host)))
        self.resources.add("the SSH side", self._stop_ssh)
        self.ssh.start()
        self.agent = self.ssh.agent
        self.boot_s = time.monotonic() - t0 if self.found_state == "off" else None

    def _stop_ssh(self) -> None:
        ssh, self.ssh = self.ssh, None
        self.agent = None
        if ssh is not None:
            ssh.stop()

    def pause(self) -> None:
        """virDomainSuspend: the domain stops while another environment measures."""
        suspend_domain(self)

    def resume(self) -> None:
        resume_domain(self)

    def _ssh_options(self, host: str) -> dict:
        opts = {"host": host, "name": self.values["domain"]}
        for key in SSH_KEYS:
            if self.values[key] != self.options[key].default:
                opts[key] = str(self.values[key])
        return opts

    def _address(self, deadline: float) -> str:
        """host= if given, else what libvirt knows (DHCP lease, guest agent, ARP); then wait
        until sshd answers on it."""
        libvirt = self._libvirt()
        host = self.values["host"] or None
        while host is None and time.monotonic() < deadline:
            for source in ("VIR_DOMAIN_INTERFACE_ADDRESSES_SRC_LEASE",
                           "VIR_DOMAIN_INTERFACE_ADDRESSES_SRC_AGENT",
                           "VIR_DOMAIN_INTERFACE_ADDRESSES_SRC_ARP"):
                try:
                    host = first_ipv4(self.dom.interfaceAddresses(getattr(libvirt, source), 0))
                except (libvirt.libvirtError, AttributeError):
                    continue
                if host:
                    break
            else:
                time.sleep(1)
        if host is None:
            raise EnvironmentUnusable(
                f"{self.label}: libvirt knows no address of the domain (no DHCP lease, guest "
                f"agent or ARP entry); give it: host=ADDR")
        while not _port_open(host, self.values["port"], 2):
            if time.monotonic() >= deadline:
                raise EnvironmentUnusable(
                    f"{self.label}: nothing answers on {host}:{self.values['port']} within "
                    f"{self.values['boot_timeout']:.0f} s; is sshd running in the domain?")
            time.sleep(0.5)
        return host

    def _restore(self) -> None:
        """Leave the domain as it was found (off: shut down, or destroyed after
        shutdown_timeout; paused: suspended; running: resumed)."""
        found, self.found_state = self.found_state, None
        self.paused = False
        if self.dom is None or found is None:
            return
        libvirt = self._libvirt()
        try:
            state, _ = self._state()
            if found == "off" and state != libvirt.VIR_DOMAIN_SHUTOFF:
                if state == libvirt.VIR_DOMAIN_PAUSED:
                    self.dom.resume()
                self.dom.shutdown()
                deadline = time.monotonic() + self.values["shutdown_timeout"]
                while self._state()[0] != libvirt.VIR_DOMAIN_SHUTOFF:
                    if time.monotonic() >= deadline:
                        self.dom.destroy()   # it was off when we came: leave it off
                        break
                    time.sleep(0.5)
            elif found == "paused" and state == libvirt.VIR_DOMAIN_RUNNING:
                self.dom.suspend()
            elif found == "running" and state == libvirt.VIR_DOMAIN_PAUSED:
                self.dom.resume()
        except libvirt.libvirtError:
            pass

    def is_alive(self) -> bool:
        if self.dom is None or self.ssh is None:
            return False
        try:
            active = bool(self.dom.isActive())
        except self._libvirt().libvirtError:
            return False
        return active and self.ssh.is_alive()

    def lost_reason(self) -> str:
        if self.dom is None:
            return "the domain is not running"
        libvirt = self._libvirt()
        try:
            state, reason = self._state()
        except libvirt.libvirtError as exc:
            return f"libvirt lost the domain ({str(exc).splitlines()[0]})"
        if state not in (libvirt.VIR_DOMAIN_RUNNING, libvirt.VIR_DOMAIN_PAUSED):
            return f"the domain is {domain_state_words(libvirt, state, reason)}"
        return self.ssh.lost_reason() if self.ssh else "the SSH side is not running"

    def capabilities(self):
        """The ssh kind's answers (from the same options), and pausing through libvirt."""
        return over_ssh(self.values, "libvirt").with_(pause=can("libvirt suspend/resume"))

    def tools_place(self) -> str | None:
        """Its programs are known only once it runs (it may be off now): a trial lacking one
        says so, naming the packages."""
        return f"the domain {self.values['domain']}"

    # -- inside the domain: the ssh kind's -----------------------------------------------
    def _inside(self) -> Ssh:
        if self.ssh is None:
            raise RuntimeError(f"{self.label}: used before start")
        return self.ssh

    def kernel_path(self, name: str) -> str:
        return self._inside().kernel_path(name)

    def scratch_dir(self) -> str:
        return self._inside().scratch_dir()

    def scratch_device(self) -> str | None:
        return self._inside().scratch_device()

    def net_path(self) -> NetPath:
        return self._inside().net_path()

    def memory_bytes(self) -> int | None:
        return self._inside().memory_bytes()

    def drop_caches(self) -> None:
        self._inside().drop_caches()

    def metadata(self) -> dict:
        meta = self.ssh.metadata() if self.ssh is not None else {}
        meta.update(libvirt_uri=self.values["uri"], libvirt_domain=self.values["domain"],
                    libvirt_platform=self.platform, found_state=self.found_state)
        if self.conn is not None and self.dom is not None:
            try:
                meta["libvirt_driver"] = self.conn.getType()
                meta["domain_xml"] = self.dom.XMLDesc(0)
            except self._libvirt().libvirtError:
                pass
        return meta


__all__ = ["ExistingDomain", "first_ipv4"]
