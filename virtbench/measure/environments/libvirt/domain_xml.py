"""The domain XML of a guest virtbench defines through libvirt (pure).

The same guest as the `qemu` kind's command line (environments/qemu/cmdline/argv.py): direct kernel
boot of virtbench's image, the root disk always virtio-blk (a qcow2 overlay over the cached
image, never written), the scratch disk on the bus under test, the NIC model under test on a
tap virtbench made, the agent on a virtio-serial port (or the second serial port), the
console to a file, and no reboot. Built with ElementTree: user values are element text or
attribute values, never pasted into markup.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

from ....core.errors import VirtbenchError
from ..qemu.cmdline.argv import AGENT_PORT, SCRATCH_SERIAL, kernel_cmdline
from ..qemu.cmdline.options import size_bytes

# scratch disk model -> (libvirt target bus, device name prefix); nvme has no disk bus in
# libvirt 9.0 (it came in 10.x)
DISK_BUS = {"virtio-blk": ("virtio", "vd"), "virtio-scsi": ("scsi", "sd"),
            "ahci": ("sata", "sd"), "ide": ("ide", "hd")}
NIC_MODEL = {"virtio-net": "virtio", "e1000": "e1000", "rtl8139": "rtl8139"}


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    el = ET.SubElement(parent, tag, {k.rstrip("_"): v for k, v in attrs.items()})
    if text is not None:
        el.text = text
    return el


def _cpu(domain: ET.Element, accel: str, cpu: str) -> None:
    if cpu == "host" and accel == "kvm":
        _sub(domain, "cpu", mode="host-passthrough")
    elif cpu in ("max", "host"):
        _sub(domain, "cpu", mode="maximum")
    else:
        el = _sub(domain, "cpu", mode="custom", match="exact")
        _sub(el, "model", cpu, fallback="forbid")


@dataclass(frozen=True)
class DomainDisk:
    """One <disk> of the domain: its file or block device, format, cache mode, target bus and
    device name, serial, and (the scratch disk's) aio mode."""

    path: str
    fmt: str
    cache: str
    bus: str
    dev: str
    serial: str
    aio: str | None = None
    block: bool = False


def _disk(devices: ET.Element, d: DomainDisk) -> None:
    disk = _sub(devices, "disk", type="block" if d.block else "file", device="disk")
    driver = {"name": "qemu", "type": d.fmt, "cache": d.cache}
    if d.aio is not None:
        driver.update(io=d.aio, discard="unmap")
    _sub(disk, "driver", **driver)
    _sub(disk, "source", **({"dev": d.path} if d.block else {"file": d.path}))
    _sub(disk, "target", dev=d.dev, bus=d.bus)
    _sub(disk, "serial", d.serial)


def build_domain_xml(cfg: dict) -> str:
    """The domain XML for one guest.

    cfg keys (as build_argv's where they mean the same): name, domain_type (kvm|qemu),
    emulator, machine, accel, cpu, vcpus, mem, kernel, initrd, root_label, root_overlay,
    scratch, scratch_format, scratch_block (bool), cache, aio, disk, nic, vhost (bool), mac,
    guest_addr, tap (or None for no NIC), console_log, agent_socket, agent_transport;
    boot_args (optional: the tunings' kernel words, as build_argv's).
    """
    if cfg["disk"] not in DISK_BUS:
        raise VirtbenchError(f"environment libvirt: disk={cfg['disk']} has no libvirt bus in "
                             f"this version; use one of: {', '.join(DISK_BUS)}")
    domain = ET.Element("domain", type=cfg["domain_type"])
    _machine(domain, cfg)
    devices = _sub(domain, "devices")
    _sub(devices, "emulator", str(cfg["emulator"]))
    _disks(devices, cfg)
    _nic(devices, cfg)
    _console_and_agent(devices, cfg)
    _sub(devices, "controller", type="usb", model="none")
    _sub(devices, "memballoon", model="none")
    # QEMU runs as root, as the qemu kind's does: the image lives in root's cache directory,
    # which the hypervisor's own user (libvirt-qemu) cannot reach; and nothing is relabelled
    seclabel = _sub(domain, "seclabel", type="static", model="dac", relabel="no")
    _sub(seclabel, "label", "+0:+0")
    ET.indent(domain)
    return ET.tostring(domain, encoding="unicode")


def _machine(domain: ET.Element, cfg: dict) -> None:
    """Name, RAM, vCPUs, the direct kernel boot, features, CPU model, clock, and no reboot."""
    _sub(domain, "name", cfg["name"])
    _sub(domain, "memory", str(size_bytes(cfg["mem"]) // 1024), unit="KiB")
    _sub(domain, "vcpu", str(cfg["vcpus"]))
    os_ = _sub(domain, "os")
    _sub(os_, "type", "hvm", arch="x86_64", machine=cfg["machine"])
    _sub(os_, "kernel", str(cfg["linux"]))
    _sub(os_, "initrd", str(cfg["initrd"]))
    _sub(os_, "cmdline", kernel_cmdline(cfg))
    features = _sub(domain, "features")
    _sub(features, "acpi")        # without it libvirt passes -no-acpi
    _sub(features, "apic")
    _cpu(domain, cfg["accel"], cfg["cpu"])
    _sub(domain, "clock", offset="utc")
    for event in ("on_poweroff", "on_reboot", "on_crash"):
        _sub(domain, event, "destroy")   # as -no-reboot: a guest that ends, ends


def _disks(devices: ET.Element, cfg: dict) -> None:
    """The root disk (a qcow2 overlay, virtio) and the scratch disk on the bus under test."""
    _disk(devices, DomainDisk(path=str(cfg["root_overlay"]), fmt="qcow2", cache="unsafe",
                              bus="virtio", dev="vda", serial="vbroot"))
    bus, prefix = DISK_BUS[cfg["disk"]]
    if cfg["disk"] == "virtio-scsi":
        _sub(devices, "controller", type="scsi", index="0", model="virtio-scsi")
    _disk(devices, DomainDisk(path=str(cfg["scratch"]), fmt=cfg["scratch_format"],
                              cache=cfg["cache"], aio=cfg["aio"], bus=bus,
                              dev=prefix + ("b" if bus == "virtio" else "a"),
                              serial=SCRATCH_SERIAL, block=bool(cfg.get("scratch_block"))))


def _nic(devices: ET.Element, cfg: dict) -> None:
    """The NIC model under test on the tap virtbench made (none without a tap)."""
    if not cfg.get("tap"):
        return
    iface = _sub(devices, "interface", type="ethernet")
    _sub(iface, "mac", address=cfg["mac"])
    _sub(iface, "target", dev=cfg["tap"], managed="no")   # ours: libvirt only opens it
    _sub(iface, "model", type=NIC_MODEL[cfg["nic"]])
    if cfg["nic"] == "virtio-net":
        _sub(iface, "driver", name="vhost" if cfg.get("vhost") else "qemu")


def _console_and_agent(devices: ET.Element, cfg: dict) -> None:
    """The console to a file; the agent on a virtio-serial port, or the second serial port."""
    console = _sub(devices, "serial", type="file")
    _sub(console, "source", path=str(cfg["console_log"]))
    _sub(console, "target", port="0")
    if cfg.get("agent_transport", "virtio-serial") == "virtio-serial":
        channel = _sub(devices, "channel", type="unix")
        _sub(channel, "source", mode="bind", path=str(cfg["agent_socket"]))
        _sub(channel, "target", type="virtio", name=AGENT_PORT)
    else:
        serial = _sub(devices, "serial", type="unix")
        _sub(serial, "source", mode="bind", path=str(cfg["agent_socket"]))
        _sub(serial, "target", port="1")
