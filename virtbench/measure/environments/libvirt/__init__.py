"""`libvirt`: domains on any driver libvirt speaks to (KVM, Xen, VirtualBox, ESX).

Two forms of one kind, told apart by `domain=`:
- `libvirt:uri=URI,domain=NAME[,host=..]`: a domain the user has (existing.py), driven
  through libvirt and measured over SSH;
- `libvirt:uri=URI[,disk=..,nic=..,vcpus=..,mem=..]`: a transient domain virtbench defines
  from its own image on this host (defined.py), with the `qemu` kind's device options.
"""
from __future__ import annotations

from dataclasses import replace

from ....core.errors import VirtbenchError
from ..base import Environment
from ..spec import EnvSpec, Option, Usability, options_text
from ..qemu.cmdline.options import OPTIONS as QEMU_OPTIONS
from ..qemu.cmdline.options import _timeout
from ..ssh import Ssh
from .defined import DefinedDomain
from .domain_xml import DISK_BUS
from .existing import SSH_KEYS, ExistingDomain

URI = Option("", help="libvirt connection URI (qemu:///system, xen:///system, "
             "vbox:///session, esx://HOST/) (required)", in_label=False)

# the qemu kind's options; disk without nvme (libvirt 9 has no NVMe disk bus), machine
# without microvm (its domain XML is not what virtbench writes); not the knobs only the qemu
# kind's own command line sets (hugepages, iothread, queues, a network-backed scratch disk,
# another QEMU: libvirtd runs its own emulator; the firmware's flash)
QEMU_ONLY = ("hugepages", "iothread", "queues", "binary", "datadir", "firmware")
DEFINED_OPTIONS: dict[str, Option] = {
    "uri": URI, **{k: v for k, v in QEMU_OPTIONS.items() if k not in QEMU_ONLY},
    "disk": replace(QEMU_OPTIONS["disk"], choices=tuple(DISK_BUS),
                    help="bus of the scratch disk (no nvme: libvirt 9 has no NVMe disk bus)"),
    "backing": replace(QEMU_OPTIONS["backing"], choices=("raw", "qcow2", "device"),
                       help="scratch disk backing: raw file, qcow2 file, or a block device "
                            "(a loop device standing in for one)"),
    "machine": replace(QEMU_OPTIONS["machine"], choices=("auto", "q35", "pc"),
                       help="machine type; auto = q35, or pc when disk=ide (microvm: use "
                            "qemu:machine=microvm)")}
EXISTING_OPTIONS: dict[str, Option] = {
    "uri": URI,
    "domain": Option("", help="an existing domain's name: measure it over SSH", in_label=False),
    "host": Option("", help="the domain's address (default: libvirt's DHCP lease, guest agent "
                   "or ARP entry)", in_label=False),
    **{key: Ssh.options[key] for key in SSH_KEYS},
    "boot_timeout": Option(300.0, convert=_timeout, in_label=False,
                           help="seconds to wait for sshd in a domain virtbench started"),
    "shutdown_timeout": Option(120.0, convert=_timeout, in_label=False,
                               help="seconds a domain found off gets to shut down at the end"),
}


def create(spec: EnvSpec) -> Environment:
    """The kind's factory: an ExistingDomain with domain=, else a DefinedDomain; an option of
    the other form is one line naming which form it belongs to."""
    if not spec.options.get("uri"):
        raise VirtbenchError(f"environment {spec}: uri= is required, e.g. "
                             "libvirt:uri=qemu:///system or "
                             "libvirt:uri=xen:///system,domain=web1")
    existing = "domain" in spec.options
    mine, other = ((EXISTING_OPTIONS, DEFINED_OPTIONS) if existing
                   else (DEFINED_OPTIONS, EXISTING_OPTIONS))
    for key in spec.options:
        if key not in mine and key in other:
            why = ("belongs to a domain virtbench defines; drop it or drop domain="
                   if existing else "needs domain=NAME (an existing domain)")
            raise VirtbenchError(f"environment {spec}: {key}= {why}")
    if existing:
        return ExistingDomain(spec, EXISTING_OPTIONS)
    return DefinedDomain(spec, DEFINED_OPTIONS)


class Libvirt:
    """The registry's entry for the kind (not an environment itself): what `virtbench envs`
    shows, the probe, and the factory that makes one of the two forms."""

    kind = "libvirt"
    summary = ("domains through libvirt: an existing one (domain=NAME, any driver: KVM, Xen, "
               "VirtualBox, ESX) over SSH, or one virtbench defines from its image")
    options = {**DEFINED_OPTIONS, **EXISTING_OPTIONS}
    create = staticmethod(create)

    @staticmethod
    def options_text() -> str:
        existing = {k: v for k, v in EXISTING_OPTIONS.items() if k != "uri"}
        defined = {k: v for k, v in DEFINED_OPTIONS.items() if k != "uri"}
        return (f"uri= (required); with domain=NAME: {options_text(existing)}; "
                f"without (a domain virtbench defines): {options_text(defined)}; either: "
                "name=LABEL")

    @staticmethod
    def probe() -> Usability:
        from .api import binding, version_text
        try:
            libvirt = binding()
        except VirtbenchError as exc:
            return Usability(False, str(exc))
        return Usability(True, "", {"libvirt": version_text(libvirt.getVersion())})


__all__ = ["Libvirt", "DefinedDomain", "ExistingDomain", "create"]
