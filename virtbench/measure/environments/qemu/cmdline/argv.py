"""The QEMU command line for one guest (pure)."""
from __future__ import annotations

from .....core.errors import VirtbenchError
from .firmware import pflash_args

AGENT_PORT = "org.virtbench.agent"
PORT_PREFIX = "org.virtbench."     # the name of a port of `ports` in the guest
SCRATCH_SERIAL = "vbscratch"


SCRATCH_DEV = "vbscratchdev"     # QOM id of the scratch disk's device: /machine/peripheral/...
NIC_DEV = "vbnic"
IOTHREAD = "iothread0"
MEMDEV = "mem0"


def virtio(device: str, machine: str) -> str:
    """A virtio device's model on `machine`: the PCI one (virtio-blk-pci), or on microvm,
    which has no PCI, the virtio-mmio one (virtio-blk-device)."""
    if machine == "microvm" and device.endswith("-pci"):
        return device[:-len("-pci")] + "-device"
    return device


def disk_devices(disk: str, drive: str, serial: str, iothread: bool = False,
                 queues: int | str = "auto", machine: str = "q35") -> list[str]:
    io = f",iothread={IOTHREAD}" if iothread else ""
    if disk == "virtio-blk":
        nq = f",num-queues={queues}" if queues != "auto" else ""
        return ["-device", f"{virtio('virtio-blk-pci', machine)},drive={drive},serial={serial},"
                           f"id={SCRATCH_DEV}{io}{nq}"]
    if disk == "virtio-scsi":
        return ["-device", f"{virtio('virtio-scsi-pci', machine)},id=scsi0{io}",
                "-device", f"scsi-hd,drive={drive},bus=scsi0.0,serial={serial},"
                           f"id={SCRATCH_DEV}"]
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


def memory_args(cfg: dict) -> tuple[str, list[str]]:
    """(the -machine suffix, the -object) of guest RAM: huge pages (a memfd of 2 MiB
    hugetlb pages, preallocated so a short reservation fails at start, not mid-run) or none."""
    if not cfg.get("hugepages"):
        return "", []
    return (f",memory-backend={MEMDEV}",
            ["-object", f"memory-backend-memfd,id={MEMDEV},size={cfg['mem']},hugetlb=on,"
                        f"hugetlbsize=2M,prealloc=on"])


def scratch_drive(cfg: dict) -> list[str]:
    """The scratch disk's -drive: a local file or device, an NBD export on a unix socket
    (cfg nbd_socket), or a file on an NFS server read by QEMU's libnfs client (cfg nfs_url)."""
    common = f"if=none,id=scratch,cache={cfg['cache']}"
    if cfg.get("nbd_socket"):
        return ["-drive", f"driver=raw,file.driver=nbd,file.server.type=unix,"
                          f"file.server.path={cfg['nbd_socket']},{common},discard=unmap"]
    if cfg.get("nfs_url"):
        return ["-drive", f"file={cfg['nfs_url']},format=raw,{common},discard=unmap"]
    return ["-drive", f"file={cfg['scratch']},format={cfg['scratch_format']},{common},"
                      f"aio={cfg['aio']},discard=unmap"]


def build_argv(cfg: dict) -> list[str]:
    """The QEMU command line for one guest.

    cfg keys: qemu, accel, machine, cpu, vcpus, mem, linux, initrd, root_image, root_label,
    scratch, scratch_format, cache, aio, disk, nic, vhost (bool), mac, guest_addr, tap (or None
    for no NIC), console_log, agent_socket, agent_transport, qmp_socket, pidfile, name;
    optional: boot_args (see kernel_cmdline), hugepages (bool), iothread (bool), queues
    (int or "auto"), nbd_socket or nfs_url (the scratch disk over the network), ports
    ({name: socket path}: more virtio-serial ports beside the agent's, each
    `org.virtbench.<name>` in the guest, bound to a unix socket QEMU listens on; virtio-serial
    agent transport only), root_format and root_snapshot (raw and True: the cached image
    never written), data_argv (another QEMU's -L arguments, right after the binary),
    firmware_code and firmware_vars (UEFI's flash: cmdline/firmware.py; the kernel given as `linux`
    must then be the bzImage).
    """
    return [*machine_args(cfg), *agent_args(cfg), *port_args(cfg), *root_args(cfg),
            *(["-object", f"iothread,id={IOTHREAD}"] if cfg.get("iothread") else []),
            *scratch_drive(cfg),
            *disk_devices(cfg["disk"], "scratch", SCRATCH_SERIAL, bool(cfg.get("iothread")),
                          cfg.get("queues", "auto"), cfg["machine"]),
            *nic_args(cfg)]


def machine_args(cfg: dict) -> list[str]:
    """The binary and the machine: accelerator, guest RAM, CPUs, firmware, the kernel and its
    command line, the console, the pid file and the QMP socket."""
    machine_mem, mem_object = memory_args(cfg)
    return [cfg["qemu"], *cfg.get("data_argv", ()), "-name", cfg["name"], "-nodefaults",
            "-no-user-config",
            "-machine", f"{cfg['machine']},accel={cfg['accel']}{machine_mem}", *mem_object,
            "-cpu", cfg["cpu"], "-smp", str(cfg["vcpus"]), "-m", cfg["mem"],
            "-display", "none", "-no-reboot", *pflash_args(cfg),
            "-kernel", str(cfg["linux"]), "-initrd", str(cfg["initrd"]),
            "-append", kernel_cmdline(cfg),
            "-serial", f"file:{cfg['console_log']}",
            "-pidfile", str(cfg["pidfile"]),
            "-qmp", f"unix:{cfg['qmp_socket']},server=on,wait=off"]


def _virtio_serial(cfg: dict) -> bool:
    return cfg.get("agent_transport", "virtio-serial") == "virtio-serial"


def agent_args(cfg: dict) -> list[str]:
    """The agent's channel: a virtio-serial port, or the second serial port (ttyS1), which
    works with no virtio at all."""
    chardev = f"socket,id=agent0,path={cfg['agent_socket']},server=on,wait=off"
    if _virtio_serial(cfg):
        return ["-chardev", chardev,
                "-device", f"{virtio('virtio-serial-pci', cfg['machine'])},id=vser0",
                "-device", f"virtserialport,bus=vser0.0,chardev=agent0,name={AGENT_PORT}"]
    return ["-chardev", chardev, "-serial", "chardev:agent0"]


def port_args(cfg: dict) -> list[str]:
    """More virtio-serial ports beside the agent's (cfg ports: {name: socket path})."""
    argv = []
    for i, (name, path) in enumerate(sorted((cfg.get("ports") or {}).items())):
        if not _virtio_serial(cfg):
            raise VirtbenchError("more virtio-serial ports need agent=virtio-serial")
        argv += ["-chardev", f"socket,id=port{i},path={path},server=on,wait=off",
                 "-device", f"virtserialport,bus=vser0.0,chardev=port{i},"
                            f"name={PORT_PREFIX}{name}"]
    return argv


def root_args(cfg: dict) -> list[str]:
    """The root disk: the cached image, never written (snapshot=on), always virtio-blk so that
    only the scratch disk's bus changes between environments (root_format=qcow2,
    root_snapshot=False: an overlay file of its own instead, which a second QEMU can open: a
    restore or a migration's destination)."""
    snapshot = ",snapshot=on" if cfg.get("root_snapshot", True) else ""
    return ["-drive", f"file={cfg['root_image']},format={cfg.get('root_format', 'raw')},"
                      f"if=none,id=root{snapshot},cache=unsafe",
            "-device", f"{virtio('virtio-blk-pci', cfg['machine'])},drive=root,serial=vbroot"]


def nic_args(cfg: dict) -> list[str]:
    """The NIC under test on the guest's tap (none without a tap); virtio-net with more than
    one queue on a multi_queue tap (net_queues), and vhost-net when asked."""
    if not cfg.get("tap"):
        return []
    queues = cfg.get("queues", "auto")
    netdev = f"tap,id=net0,ifname={cfg['tap']},script=no,downscript=no"
    device = (f"{virtio(NIC_DEVICE[cfg['nic']], cfg['machine'])},netdev=net0,mac={cfg['mac']},"
              f"id={NIC_DEV}")
    if cfg["nic"] == "virtio-net":
        if queues != "auto" and queues > 1:
            netdev += f",queues={queues}"
            device += f",mq=on,vectors={2 * queues + 2}"
        netdev += ",vhost=" + ("on" if cfg.get("vhost") else "off")
    return ["-netdev", netdev, "-device", device]


def net_queues(nic: str, queues: int | str) -> int:
    """Queues of the guest NIC's tap: more than one needs a tap made with multi_queue."""
    return queues if nic == "virtio-net" and queues != "auto" else 1
