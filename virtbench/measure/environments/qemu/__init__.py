"""`qemu`: a Debian guest under QEMU, driven directly (full control of -device and -drive).

    qemu[:accel=auto|kvm|tcg,vcpus=1,mem=1G,machine=auto|q35|pc,cpu=auto,
         disk=virtio-blk|virtio-scsi|ahci|ide|nvme,cache=none|...,aio=threads|native|io_uring,
         backing=raw|qcow2|device|nbd|nfs,nic=virtio-net|e1000|rtl8139,vhost=auto|on|off,
         knobs: hugepages=off|on,iothread=off|on,queues=auto|N (docs/knobs.md),
         guest tunings: tick=,highres=,clocksource=,pmtimer=,iosched=,offloads=,
         nic_coalesce_us=,e1000_itr=,napi_tx= (booted/tunings.py, docs/tunings.md)]

The root disk is the cached image from `virtbench.machinery.image.guest_image` opened with snapshot=on (its
overlay lands in the environment's work directory through TMPDIR); the benchmark's scratch disk
is a fresh image per environment on the bus under test, with serial=vbscratch, found in the
guest under /dev/disk/by-id (`scratch_device()`). The agent talks over a virtio-serial port
bound to a unix-socket chardev; QMP does pause/resume/quit. The NIC's tap lives in a network
namespace `vb-<id>` (virtbench.machinery.host.net.netns) whose host-side address is the peer for network
benchmarks; QEMU runs inside that namespace.

Cleanup: stop() (the base's) releases everything the life-cycle steps registered, last made
first; a guardian process (virtbench/machinery/host/guardian.py) removes the same if the virtbench
process dies without stop() (SIGKILL, crash); QEMU also gets PR_SET_PDEATHSIG; and the prepare
step sweeps namespaces and work directories left by dead owners.

The package, one concern a module or sub-package: environment (class Qemu: the life-cycle
steps, wiring the collaborators), resolve (what it settles before a guest starts: the
accelerator, vhost-net, the host's support), metadata (what a guest records), profiling
(ExitProfiler), twin (a twin of the guest run while it is paused: a boot measurement's, a
snapshot's, a migration's), hugepages (the host's 2 MiB page pool), netdisk (the NBD and NFS
servers of backing=nbd and backing=nfs); vmm/ (the QEMU program, its version, the KVM probe,
the QEMU process and its QMP monitor, process hygiene), cmdline/ (the options and the
command line), booted/ (the boot, what is done inside the guest, the guest tunings, and
reading tunings and knobs back) and vmstate/ (a snapshot's restore and a live migration: a
second QEMU taking a running guest's state).
Callers reach vmm/version.py's qemu_version/qemu_binary and vmm/kvm_probe.py's kvm_probe
through their modules, so a test fakes each by patching that module. The function kvm_probe
is deliberately not re-exported by vmm/: it would shadow the submodule of the same name.
"""
from .booted.boot import GuestBootError
from .environment import Qemu
from .vmm.version import qemu_binary

__all__ = ["GuestBootError", "Qemu", "qemu_binary"]
