"""Inside one booted guest, through its agent: a collaborator the qemu environment (and a
libvirt domain virtbench defines) makes when the agent first answers and lets go at stop.
It stages our kernels, applies the tunings, makes the scratch file system, the network path
and the ssh target, drops caches, and reads the drivers the guest bound."""
from __future__ import annotations

import io
import os
import subprocess
import tarfile
import time

from .....machinery.machine import fingerprint
from .....machinery.kernels import build as kernels
from .....core.errors import AgentError, EnvironmentUnusable, VirtbenchError
from .....machinery.host.net.netpath_types import NetPath, SshTarget
from .....machinery.agent.transport import ExecResult
from ...base import drop_page_cache
from . import knobs, readback
from ..cmdline.argv import SCRATCH_SERIAL
from .tunings import mismatches, requested, runtime_commands

GUEST_KERNEL_DIR = "/opt/virtbench/kernels"
SCRATCH_MOUNT = "/mnt/vbscratch"

# the driver the guest binds for each model (any one of the listed names is a match)
DISK_DRIVERS = {"virtio-blk": ("virtio_blk",), "virtio-scsi": ("virtio_scsi",),
                "ahci": ("ahci",), "ide": ("ata_piix",), "nvme": ("nvme",)}
NIC_DRIVERS = {"virtio-net": ("virtio_net",), "e1000": ("e1000",),
               "rtl8139": ("8139cp", "8139too")}


def guest_kernel_release(uname_srm: str | None) -> str | None:
    """The fingerprint's `uname -srm` ("Linux 6.1.0-28-amd64 x86_64") -> "6.1.0-28-amd64"."""
    parts = (uname_srm or "").split()
    return parts[1] if len(parts) >= 2 else None


class Guest:
    """One boot of a guest seen from inside. Everything it needs is given: the agent, the
    options, the network namespace it sits behind, its MAC, the image it booted, the work
    directory's manifest (for the namespaces it adds) and the resources to register in."""

    def __init__(self, label: str, values: dict, agent, ns, mac: str, image, work, resources):
        self.label, self.values, self.agent = label, values, agent
        self.ns, self.mac, self.image, self.work = ns, mac, image, work
        self.resources = resources
        self.kernels_staged: list[str] = []
        self.stage_s: float | None = None
        self.tunings_read: dict = {}       # the guest's read-back of the tunings (metadata)
        self._scratch_dev: str | None = None
        self._scratch_dir: str | None = None
        self._net: NetPath | None = None
        self._topology = None

    def exec(self, argv: list[str], timeout: float, env: dict | None = None) -> ExecResult:
        return self.agent.exec(argv, timeout=timeout, env=env)

    def stage_kernels(self) -> str | None:
        """Copy our benchmark kernels to GUEST_KERNEL_DIR with agent.put (one tar.gz); a note
        for the report when they could not be built."""
        try:
            kdir = kernels.build()
        except VirtbenchError as exc:
            return f"benchmark kernels not staged: {exc}"
        names = [n for n in kernels.KERNELS if (kdir / n).exists()]
        if not names:
            return None
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=9) as tar:
            for name in names:
                tar.add(kdir / name, arcname=name)
        t0 = time.monotonic()
        staged = f"{GUEST_KERNEL_DIR}/kernels.tar.gz"
        self.agent.put(staged, buf.getvalue())
        res = self.exec(["sh", "-c", 'tar -xzf "$1" -C "$2" && rm -f "$1"', "sh",
                         staged, GUEST_KERNEL_DIR], timeout=60)
        if res.exit != 0:
            raise AgentError(f"{self.label}: unpacking the kernels failed: {res.stderr.strip()}")
        self.stage_s = time.monotonic() - t0
        self.kernels_staged = names
        return None

    # -- storage ---------------------------------------------------------------------------
    def scratch_device(self) -> str:
        """The scratch disk's stable path in the guest (/dev/disk/by-id/...vbscratch)."""
        if self._scratch_dev is None:
            script = ("for i in $(seq 50); do for f in /dev/disk/by-id/*" + SCRATCH_SERIAL +
                      "; do [ -e \"$f\" ] && { echo \"$f\"; exit 0; }; done; sleep 0.1; done;"
                      " exit 1")
            res = self.exec(["sh", "-c", script], timeout=30)
            if res.exit != 0 or not res.stdout.strip():
                raise AgentError(f"{self.label}: no disk with serial {SCRATCH_SERIAL} "
                                 "under /dev/disk/by-id in the guest")
            self._scratch_dev = res.stdout.split()[0]
        return self._scratch_dev

    def scratch_dir(self) -> str:
        """A fresh ext4 file system on the scratch disk, mounted at SCRATCH_MOUNT (made once).

        Inode tables and journal are initialised at mkfs time, so no ext4lazyinit thread
        writes in the background while a benchmark measures."""
        if self._scratch_dir is None:
            dev = self.scratch_device()
            script = ('set -e; mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 '
                      '-L vbscratch "$1"; mkdir -p "$2"; mount "$1" "$2"')
            res = self.exec(["sh", "-c", script, "sh", dev, SCRATCH_MOUNT], timeout=600)
            if res.exit != 0:
                raise AgentError(f"{self.label}: preparing the scratch file system failed: "
                                 f"{(res.stderr.strip() or 'no output').splitlines()[-1]}")
            self._scratch_dir = SCRATCH_MOUNT
        return self._scratch_dir

    def drop_caches(self) -> None:
        """Drop the guest's page cache, then the host's (the scratch image's pages)."""
        drop_page_cache(self)
        try:
            subprocess.run(["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"],
                           capture_output=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired):
            pass

    # -- network ---------------------------------------------------------------------------
    def net_path(self) -> NetPath:
        """Guest NIC <-> tap in the host-side namespace, plus a remote namespace behind it."""
        if self._net is None:
            from .....machinery.host.net import netpath
            topo = netpath.Topology()
            self._topology = topo
            self.resources.add("the remote namespace", self._delete_topology)
            remote_ns = self.ns.name + "-r"
            self.work.add("extra_netns", remote_ns)
            remote_addr, remote_prefix = netpath.add_remote(topo, self.ns.name, remote_ns)
            res = self.exec(["ip", "route", "replace", "default", "via", self.ns.host_ip],
                            timeout=30)
            if res.exit != 0:
                raise AgentError(f"{self.label}: setting the guest's default route failed: "
                                 f"{res.stderr.strip()}")
            self._net = NetPath(env_address=self.ns.guest_ip, host_address=self.ns.host_ip,
                                host_prefix=self.ns.exec_argv([]), env_prefix=[],
                                remote_address=remote_addr, remote_prefix=remote_prefix,
                                nic=self.values["nic"])
        return self._net

    def _delete_topology(self) -> None:
        topology, self._topology, self._net = self._topology, None, None
        if topology is not None:
            topology.delete()

    def ssh_target(self) -> SshTarget:
        """The guest's own sshd (started at boot) with the image's client key."""
        pub = self.image.dir / "ssh_host_ed25519_key.pub"   # made with the image
        host_key = " ".join(pub.read_text().split()[:2]) if pub.exists() else ""
        return SshTarget(address=self.ns.guest_ip, port=22, user="root",
                         identity=str(self.image.ssh_key), prefix=self.ns.exec_argv([]),
                         host_key=host_key)

    # -- drivers and tunings ---------------------------------------------------------------
    def _driver_chain(self, sysfs_path: str) -> list[str]:
        script = ('p=$(readlink -f "$1"); while [ "$p" != / ] && [ "$p" != /sys ]; do '
                  '[ -e "$p/driver" ] && basename "$(readlink "$p/driver")"; '
                  'p=$(dirname "$p"); done')
        res = self.exec(["sh", "-c", script, "sh", sysfs_path], timeout=30)
        return res.stdout.split()

    def scratch_drivers(self) -> list[str]:
        """Guest drivers bound along the scratch disk's device path, innermost first."""
        dev = self.exec(["readlink", "-f", self.scratch_device()], timeout=10).stdout.strip()
        return self._driver_chain(f"/sys/class/block/{os.path.basename(dev)}")

    def guest_nic(self) -> str | None:
        """The guest interface carrying our MAC."""
        res = self.exec(["sh", "-c", "for d in /sys/class/net/*; do "
                         f"[ \"$(cat $d/address)\" = {self.mac} ] && basename $d; done"],
                        timeout=10)
        return res.stdout.strip() or None

    def nic_drivers(self) -> list[str]:
        nic = self.guest_nic()
        return self._driver_chain(f"/sys/class/net/{nic}/device") if nic else []

    def apply_tunings(self, knobs_read: dict | None = None) -> None:
        """Apply the tunings that take effect after boot (I/O scheduler, NIC offloads and
        coalescing), then read every tuning back in the guest into `tunings_read`. A
        requested tuning the guest does not report as asked fails the start, one line
        naming each such tuning and what the guest reports. `knobs_read` (the qemu kind's
        QMP read-back of its knobs) gets the guest's queue counts, and a knob that did not
        take fails the start the same way."""
        want = requested(self.values)
        block = nic = None
        try:
            dev = self.exec(["readlink", "-f", self.scratch_device()], timeout=10).stdout
            block = os.path.basename(dev.strip()) or None
            nic = self.guest_nic()
        except AgentError:
            if want:
                raise
        why: dict[str, str] = {}
        for name, argv in runtime_commands(self.values, nic, block).items():
            res = self.exec(argv, timeout=60)
            if res.exit != 0:
                lines = (res.stderr.strip() or res.stdout.strip()).splitlines()
                why[name] = f"{argv[0] if argv[0] != 'sh' else 'setting it'} failed: " + (
                    lines[-1] if lines else f"exit status {res.exit}")
        res = self.exec(readback.script_argv(block, nic), timeout=60)
        self.tunings_read = readback.read_all(res.stdout, self.values["nic"])
        if "clocksource" in want and "clocksource" not in why:
            why["clocksource"] = "available: " + (
                readback.available_clocksources(res.stdout) or "none listed")
        bad = mismatches(want, self.tunings_read, why)
        if knobs_read is not None:
            res = self.exec(["sh", "-c", knobs.GUEST_SCRIPT, "sh", block or "", nic or ""],
                            timeout=30)
            knobs_read.update(knobs.parse_guest_queues(res.stdout))
            bad += knobs.mismatches(self.values, knobs_read)
        if bad:
            raise EnvironmentUnusable(f"{self.label}: " + "; ".join(bad))

    def facts(self) -> dict:
        """What the guest says of itself: the drivers it bound and its fingerprint."""
        meta: dict = {}
        try:
            meta["guest_disk_drivers"] = self.scratch_drivers()
            meta["guest_nic_drivers"] = self.nic_drivers()
        except AgentError:
            pass
        meta.update(fingerprint.collect(self))
        return meta
