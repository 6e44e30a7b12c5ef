"""The QEMU command line for one guest (pure)."""
from __future__ import annotations

from ...errors import VirtbenchError

AGENT_PORT = "org.virtbench.agent"
SCRATCH_SERIAL = "vbscratch"


def virtio(device: str, machine: str) -> str:
    """A virtio device's model on `machine`: the PCI one (virtio-blk-pci), or on microvm,
    which has no PCI, the virtio-mmio one (virtio-blk-device)."""
    if machine == "microvm" and device.endswith("-pci"):
        return device[:-len("-pci")] + "-device"
    return device


def disk_devices(disk: str, drive: str, serial: str, machine: str = "q35") -> list[str]:
    if disk == "virtio-blk":
        return ["-device", f"{virtio('virtio-blk-pci', machine)},drive={drive},serial={serial}"]
    if disk == "virtio-scsi":
        return ["-device", "virtio-scsi-pci,id=scsi0",
                "-device", f"scsi-hd,drive={drive},bus=scsi0.0,serial={serial}"]
    if disk == "ahci":
        return ["-device", "ahci,id=ahci0",
                "-device", f"ide-hd,drive={drive},bus=ahci0.0,serial={serial}"]
    if disk == "ide":
        return ["-device", f"ide-hd,drive={drive},bus=ide.0,serial={serial}"]
    if disk == "nvme":
        return ["-device", f"nvme,drive={drive},serial={serial}"]
    raise VirtbenchError(f"unknown disk model {disk}")


NIC_DEVICE = {"virtio-net": "virtio-net-pci", "e1000": "e1000", "rtl8139": "rtl8139"}


def kernel_cmdline(cfg: dict) -> str:
    """The guest kernel's command line, for QEMU's -append and libvirt's <cmdline> alike.

    cfg keys: root_label, guest_addr, mac, and boot_args (optional: the tunings' words,
    tunings.boot_args). vb.ip/vb.mac are read by the guest's rc; `module.param=value`
    words by the initramfs, which loads the drivers."""
    words = ["console=ttyS0", "quiet", f"root=LABEL={cfg['root_label']}", "rw", "panic=-1",
             f"vb.ip={cfg['guest_addr']}", f"vb.mac={cfg['mac']}"]
    return " ".join(words + list(cfg.get("boot_args") or ()))


def build_argv(cfg: dict) -> list[str]:
    """The QEMU command line for one guest.

    cfg keys: qemu, accel, machine, cpu, vcpus, mem, kernel, initrd, root_image, root_label,
    scratch, scratch_format, cache, aio, disk, nic, vhost (bool), mac, guest_addr, tap (or None
    for no NIC), console_log, agent_socket, agent_transport, qmp_socket, pidfile, name;
    boot_args (optional, see kernel_cmdline); root_format and root_snapshot (optional:
    raw and True, the cached image never written).
    """
    append = kernel_cmdline(cfg)
    machine = cfg["machine"]
    argv = [cfg["qemu"], "-name", cfg["name"], "-nodefaults", "-no-user-config",
            "-machine", f"{cfg['machine']},accel={cfg['accel']}",
            "-cpu", cfg["cpu"], "-smp", str(cfg["vcpus"]), "-m", cfg["mem"],
            "-display", "none", "-no-reboot",
            "-kernel", str(cfg["kernel"]), "-initrd", str(cfg["initrd"]), "-append", append,
            "-serial", f"file:{cfg['console_log']}",
            "-pidfile", str(cfg["pidfile"]),
            "-qmp", f"unix:{cfg['qmp_socket']},server=on,wait=off"]
    agent_chardev = f"socket,id=agent0,path={cfg['agent_socket']},server=on,wait=off"
    if cfg.get("agent_transport", "virtio-serial") == "virtio-serial":
        argv += ["-chardev", agent_chardev,
                 "-device", f"{virtio('virtio-serial-pci', machine)},id=vser0",
                 "-device", f"virtserialport,bus=vser0.0,chardev=agent0,name={AGENT_PORT}"]
    else:  # the second serial port (ttyS1): works with no virtio at all
        argv += ["-chardev", agent_chardev, "-serial", "chardev:agent0"]
    # the root disk: the cached image, never written (snapshot=on), always virtio-blk so that
    # only the scratch disk's bus changes between environments
    # (root_format=qcow2, root_snapshot=False: an overlay file of its own instead, which a
    # second QEMU can open: a restore or a migration's destination)
    snapshot = ",snapshot=on" if cfg.get("root_snapshot", True) else ""
    argv += ["-drive", f"file={cfg['root_image']},format={cfg.get('root_format', 'raw')},"
                       f"if=none,id=root{snapshot},cache=unsafe",
             "-device", f"{virtio('virtio-blk-pci', machine)},drive=root,serial=vbroot"]
    argv += ["-drive", f"file={cfg['scratch']},format={cfg['scratch_format']},if=none,"
                       f"id=scratch,cache={cfg['cache']},aio={cfg['aio']},discard=unmap"]
    argv += disk_devices(cfg["disk"], "scratch", SCRATCH_SERIAL, machine)
    if cfg.get("tap"):
        netdev = f"tap,id=net0,ifname={cfg['tap']},script=no,downscript=no"
        if cfg["nic"] == "virtio-net":
            netdev += ",vhost=" + ("on" if cfg.get("vhost") else "off")
        argv += ["-netdev", netdev,
                 "-device", f"{virtio(NIC_DEVICE[cfg['nic']], machine)},netdev=net0,"
                            f"mac={cfg['mac']}"]
    return argv
