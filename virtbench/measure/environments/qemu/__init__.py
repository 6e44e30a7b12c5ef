"""`qemu`: a Debian guest under QEMU, driven directly (full control of -device and -drive).

    qemu[:accel=auto|kvm|tcg,vcpus=1,mem=1G,machine=auto|q35|pc,cpu=auto,
         disk=virtio-blk|virtio-scsi|ahci|ide|nvme,cache=none|...,aio=threads|native|io_uring,
         backing=raw|qcow2|device|nbd|nfs,nic=virtio-net|e1000|rtl8139,vhost=auto|on|off,
         knobs: hugepages=off|on,iothread=off|on,queues=auto|N (docs/knobs.md),
         guest tunings: tick=,highres=,clocksource=,pmtimer=,iosched=,offloads=,
         nic_coalesce_us=,e1000_itr=,napi_tx= (tunings.py, docs/tunings.md)]

The root disk is the cached image from `virtbench.machinery.image.guest` opened with snapshot=on (its
overlay lands in the environment's work directory through TMPDIR); the benchmark's scratch disk
is a fresh image per environment on the bus under test, with serial=vbscratch, found in the
guest under /dev/disk/by-id (`scratch_device()`). The agent talks over a virtio-serial port
bound to a unix-socket chardev; QMP does pause/resume/quit. The NIC's tap lives in a network
namespace `vb-<id>` (virtbench.machinery.host.netns) whose host-side address is the peer for network
benchmarks; QEMU runs inside that namespace.

Cleanup: stop() (the base's) releases everything the life-cycle steps registered, last made
first; a guardian process (virtbench/machinery/host/guardian.py) removes the same if the virtbench
process dies without stop() (SIGKILL, crash); QEMU also gets PR_SET_PDEATHSIG; and the prepare
step sweeps namespaces and work directories left by dead owners.

The package, one concern a module: options (option values and their checks), version (the
binary and its version), process (sweeping, liveness, why a guest went away), kvm_probe, qmp,
argv (the command line), environment (class Qemu: the life-cycle steps, wiring the
collaborators below), vmm (QemuProcess: QEMU and its monitor), boot (scratch disk, waiting
for the agent, power-off), guest (Guest: inside the guest), profiling (ExitProfiler), tunings
(the guest tunings: options, kernel words, guest commands, checks) and readback (reading them
back in the guest); knobs (reading hugepages, iothread, queues, cpu and backing back from
QMP), hugepages (the host's 2 MiB page pool) and netdisk (the NBD and NFS servers of
backing=nbd and backing=nfs).
Callers reach version.qemu_version/qemu_binary and kvm_probe.kvm_probe through their modules,
so a test fakes each by patching that module. The function kvm_probe is deliberately not
re-exported here: it would shadow the submodule of the same name.
"""
from .booted.boot import GuestBootError
from .environment import Qemu
from .vmm.version import qemu_binary

__all__ = ["GuestBootError", "Qemu", "qemu_binary"]
