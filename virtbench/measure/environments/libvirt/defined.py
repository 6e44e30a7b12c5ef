"""A guest virtbench defines through libvirt: the `qemu` kind's guest (image, scratch disk,
network namespace, agent, guardian, everything inside: its Guest), started by libvirtd as a
transient domain instead of by virtbench itself. What differs is the start step and the VMM
collaborator: a DomainVmm (domain.py), whose start, pause, resume, end and loss go through
libvirt, where the qemu kind has its QemuProcess."""
from __future__ import annotations

import subprocess
from pathlib import Path

from ....machinery.host.net import netns
from ....core.capabilities import cannot
from ....core.errors import EnvironmentUnusable, VirtbenchError
from ..base import Environment
from ..qemu.vmm import version
from ..qemu.booted.boot import make_scratch
from ..qemu.environment import Qemu
from ..qemu.booted.tunings import boot_args
from .api import binding, is_local_qemu, open_connection, version_text
from .domain import DomainVmm
from .domain_xml import build_domain_xml


class DefinedDomain(Qemu):
    """`libvirt:uri=URI[,disk=..,nic=..,vcpus=..,mem=..]`."""

    kind = "libvirt"

    def __init__(self, spec, options: dict):
        self.options = options
        super().__init__(spec)
        uri = self.values["uri"]
        if not is_local_qemu(uri):
            raise VirtbenchError(
                f"environment {spec}: a domain virtbench defines runs on this host, from its "
                f"own image: use a local QEMU URI (qemu:///system), or measure a domain you "
                f"have with domain=NAME")
        self.conn = None
        self.domain_xml: str | None = None

    def capabilities(self):
        """The qemu kind's, except what needs QEMU's arguments or a twin of its own:
        libvirtd, not virtbench, starts its QEMU. Its footprint is read as qemu's."""
        return super().capabilities().with_(
            exit_profile=cannot("libvirt: exit profiles of a domain libvirtd starts are not "
                                "supported yet; profile the same guest as qemu:... (same "
                                "options)"),
            boot_phases=cannot("libvirt: the boot timer is QEMU arguments virtbench passes "
                               "itself; measure the same guest's boot as qemu:... (same "
                               "options)"),
            snapshot=cannot("libvirt: save and restore of a domain virtbench defines are "
                            "not supported yet (its tap is adopted into a namespace a "
                            "restored domain cannot find); measure it as qemu:..."),
            migrate=cannot("libvirt: a migration needs a second libvirtd (libvirt refuses "
                           "one to the same host); measure it as qemu:..."))

    # the base's refusals, in the record's words (Qemu's would boot a twin of a domain)
    profiled_trial = Environment.profiled_trial
    measure_boot = Environment.measure_boot
    snapshot_cycle = Environment.snapshot_cycle
    migrate_cycle = Environment.migrate_cycle

    def resolve(self) -> None:
        if self.conn is None:
            self.conn = open_connection(self.values["uri"])
            self.resources.add("the libvirt connection", self._close_connection)
        super().resolve()

    def _close_connection(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn.close()
            except binding().libvirtError:
                pass

    # -- the start step: libvirtd runs QEMU ----------------------------------------------
    def _root_overlay(self) -> Path:
        """A qcow2 overlay over the cached image: the guest writes there, never to the image
        (the qemu kind's snapshot=on)."""
        overlay = self.work.path / "root.qcow2"
        proc = subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw",
                               "-b", str(self.image.path), str(overlay)],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            raise EnvironmentUnusable(f"qemu-img create (root overlay) failed: "
                                      f"{proc.stderr.strip()}")
        return overlay

    def launch(self) -> None:
        """The scratch disk, a tap for libvirtd to open, the domain, then the namespace
        (which adopts the tap QEMU holds)."""
        scratch, scratch_format = make_scratch(self.values, self.work)
        ns = self._make_namespace()
        host_tap = "vbt" + ns.name[len(netns.PREFIX):]
        name = f"virtbench-{ns.name}"
        self.work.set(host_taps=[host_tap],
                      libvirt_domain={"uri": self.values["uri"], "name": name})
        self.resources.add("the host tap", lambda: netns.delete_host_tap(host_tap))
        netns.add_host_tap(host_tap)     # (still in the root namespace if start failed early)
        self.vmm = DomainVmm(self.label, self.work.path, self.values["uri"])
        cfg = {
            "name": name, "domain_type": "kvm" if self.accel == "kvm" else "qemu",
            "emulator": version.qemu_binary(), "machine": self.machine, "accel": self.accel,
            "cpu": self.cpu, "vcpus": self.values["vcpus"], "mem": self.values["mem"],
            "linux": self.image.linux, "initrd": self.image.initrd,
            "root_label": self.image.root_label, "root_overlay": self._root_overlay(),
            "scratch": scratch, "scratch_format": scratch_format,
            "scratch_block": self.values["backing"] == "device",
            "cache": self.values["cache"], "aio": self.values["aio"],
            "disk": self.values["disk"], "nic": self.values["nic"], "vhost": self.vhost,
            "mac": self.mac, "guest_addr": ns.guest_addr, "tap": host_tap,
            "console_log": self.vmm.console_log, "agent_socket": self.work.path / "agent.sock",
            "agent_transport": self.values["agent"], "boot_args": boot_args(self.values),
        }
        self.domain_xml = build_domain_xml(cfg)
        (self.work.path / "domain.xml").write_text(self.domain_xml)
        self.resources.add("the domain", self.vmm.end)
        self.vmm.create(self.conn, self.domain_xml)
        ns.create(adopt_tap=host_tap)    # the tap QEMU holds, into our namespace

    def lost_reason(self) -> str:
        return self.vmm.lost_reason() if self.vmm is not None else "the domain is not running"

    def metadata(self) -> dict:
        meta = super().metadata()
        meta.pop("qemu_argv", None)
        meta["libvirt_uri"] = self.values["uri"]
        libvirt = binding() if self.conn is not None else None
        if self.conn is not None:
            try:
                meta["libvirt_version"] = version_text(self.conn.getLibVersion())
                meta["libvirt_driver"] = self.conn.getType()
            except libvirt.libvirtError:
                pass
        dom = self.vmm.dom if self.vmm is not None else None
        meta["domain_xml"] = self.domain_xml
        if dom is not None:
            try:
                meta["domain_xml"] = dom.XMLDesc(0)
            except binding().libvirtError:
                pass
        return meta
