"""A guest virtbench defines through libvirt: the `qemu` kind's guest (image, scratch disk,
network namespace, agent, guardian), started by libvirtd as a transient domain instead of
by virtbench itself. Everything inside the guest is the qemu kind's (GuestSide); what
differs is who runs QEMU: start, pause, resume, stop and loss go through libvirt."""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from ... import netns
from ...capabilities import cannot
from ...errors import EnvironmentUnusable, VirtbenchError
from ..qemu import version
from ..qemu.environment import Qemu
from ..qemu.process import guest_panic
from ..qemu.tunings import boot_args
from .connection import (describe_error, domain_state_words, is_local_qemu, open_connection,
                         version_text)
from .control import DomainControl
from .domain_xml import build_domain_xml


class DefinedDomain(DomainControl, Qemu):
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
        self.dom = None
        self.domain_xml: str | None = None

    def capabilities(self):
        """The qemu kind's, except exit profiles: libvirtd, not virtbench, starts its QEMU."""
        return super().capabilities().with_(exit_profile=cannot(
            "libvirt: exit profiles of a domain libvirtd starts are not supported yet; "
            "profile the same guest as qemu:... (same options)"))

    def resolve(self) -> None:
        if self.conn is None:
            self.conn = open_connection(self.values["uri"])
        super().resolve()

    # -- boot ----------------------------------------------------------------------------
    def _root_overlay(self) -> Path:
        """A qcow2 overlay over the cached image: the guest writes there, never to the image
        (the qemu kind's snapshot=on)."""
        overlay = self.workdir / "root.qcow2"
        proc = subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw",
                               "-b", str(self.image.path), str(overlay)],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            raise EnvironmentUnusable(f"qemu-img create (root overlay) failed: "
                                      f"{proc.stderr.strip()}")
        return overlay

    def _boot(self) -> None:
        libvirt = self._libvirt()
        scratch, scratch_format = self._make_scratch()
        i = self.net_index
        self.ns = netns.NetNS(host_addr=f"10.213.{i}.1/24", guest_addr=f"10.213.{i}.2/24")
        host_tap = "vbt" + self.ns.name[len(netns.PREFIX):]
        name = f"virtbench-{self.ns.name}"
        self._manifest.update(netns=self.ns.name, host_taps=[host_tap],
                              libvirt_domain={"uri": self.values["uri"], "name": name})
        self._save_manifest()
        netns.add_host_tap(host_tap)
        self.console_log = self.workdir / "console.log"
        cfg = {
            "name": name, "domain_type": "kvm" if self.accel == "kvm" else "qemu",
            "emulator": version.qemu_binary(), "machine": self.machine, "accel": self.accel,
            "cpu": self.cpu, "vcpus": self.values["vcpus"], "mem": self.values["mem"],
            "kernel": self.image.kernel, "initrd": self.image.initrd,
            "root_label": self.image.root_label, "root_overlay": self._root_overlay(),
            "scratch": scratch, "scratch_format": scratch_format,
            "scratch_block": self.values["backing"] == "device",
            "cache": self.values["cache"], "aio": self.values["aio"],
            "disk": self.values["disk"], "nic": self.values["nic"], "vhost": self.vhost,
            "mac": self.mac, "guest_addr": self.ns.guest_addr, "tap": host_tap,
            "console_log": self.console_log, "agent_socket": self.workdir / "agent.sock",
            "agent_transport": self.values["agent"], "boot_args": boot_args(self.values),
        }
        self.domain_xml = build_domain_xml(cfg)
        (self.workdir / "domain.xml").write_text(self.domain_xml)
        t0 = time.monotonic()
        try:
            self.dom = self.conn.createXML(self.domain_xml, 0)     # transient: gone when off
        except libvirt.libvirtError as exc:
            raise EnvironmentUnusable(f"{self.label}: libvirt did not start the domain: "
                                      f"{describe_error(self.values['uri'], exc)}") from None
        self.ns.create(adopt_tap=host_tap)   # the tap QEMU holds, into our namespace
        self.agent = self._wait_for_agent(t0, self.workdir / "domain.xml")
        self.boot_s = time.monotonic() - t0
        self._stage_kernels()

    # -- the VMM is libvirtd's ----------------------------------------------------------
    def _vmm_running(self) -> bool:
        if self.dom is None:
            return False
        try:
            return bool(self.dom.isActive())
        except self._libvirt().libvirtError:
            return False        # a transient domain that ended is gone altogether

    def _vmm_wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self._vmm_running():
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired("libvirt domain", timeout)
            time.sleep(0.1)

    def _vmm_end(self) -> None:
        if self._vmm_running():
            try:
                self.dom.destroy()
            except self._libvirt().libvirtError:
                pass
        self.dom = None

    def _vmm_failed(self, _path: Path) -> EnvironmentUnusable:
        return EnvironmentUnusable(f"{self.label}: the domain ended while booting: "
                                   f"{self.lost_reason()}")

    def stop(self) -> None:
        super().stop()
        for tap in self._manifest.get("host_taps") or []:
            netns.delete_host_tap(tap)     # still in the root namespace if start failed early
        self._close_connection()

    def lost_reason(self) -> str:
        if self.dom is None:
            return "the domain is not running"
        libvirt = self._libvirt()
        try:
            state, reason = self.dom.state()
            how = f"the domain is {domain_state_words(libvirt, state, reason)}"
        except libvirt.libvirtError:
            how = "the domain is gone (a transient domain that ended)"
        panic = guest_panic(self._console_text())
        return f"{how}; {panic}" if panic else how

    def vcpu_threads(self) -> list[int]:
        """Host thread ids of the vCPUs, through libvirt's QEMU monitor passthrough."""
        if self._vcpu_tids is None:
            if self.dom is None:
                return []
            from ...pinning import vcpu_threads
            import libvirt_qemu
            reply = libvirt_qemu.qemuMonitorCommand(
                self.dom, json.dumps({"execute": "query-cpus-fast"}), 0)
            self._vcpu_tids = vcpu_threads(json.loads(reply)["return"])
        return list(self._vcpu_tids)

    def pin_targets(self, bench, params: dict) -> list[tuple[int, int]] | None:
        if self.dom is None:
            return None
        try:
            return [(tid, 1) for tid in self.vcpu_threads()]
        except (self._libvirt().libvirtError, ImportError, KeyError, ValueError):
            return None

    def metadata(self) -> dict:
        meta = super().metadata()
        meta.pop("qemu_argv", None)
        meta["libvirt_uri"] = self.values["uri"]
        if self.conn is not None:
            try:
                meta["libvirt_version"] = version_text(self.conn.getLibVersion())
                meta["libvirt_driver"] = self.conn.getType()
            except self._libvirt().libvirtError:
                pass
        if self.dom is not None:
            try:
                meta["domain_xml"] = self.dom.XMLDesc(0)
            except self._libvirt().libvirtError:
                meta["domain_xml"] = self.domain_xml
        else:
            meta["domain_xml"] = self.domain_xml
        return meta

