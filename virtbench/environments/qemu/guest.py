"""Inside the guest: what it offers benchmarks, the staged kernels, the scratch disk and its
file system, the network path, the drivers the guest bound, and the metadata. A mixin of class Qemu (environment.py),
which owns the state these read (agent, ns, image, workdir, values, _manifest)."""
from __future__ import annotations

import io
import os
import subprocess
import tarfile
import time

from ... import fingerprint, kernels
from ...capabilities import Capabilities, can
from ...errors import AgentError, EnvironmentUnusable, VirtbenchError
from ...netpath_types import NetPath, SshTarget
from . import readback, version
from .argv import SCRATCH_SERIAL
from .options import size_bytes
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


class GuestSide:
    """What class Qemu does inside its guest (through its agent)."""

    def _stage_kernels(self) -> None:
        """Copy our benchmark kernels to GUEST_KERNEL_DIR with agent.put (one tar.gz)."""
        try:
            kdir = kernels.build()
        except VirtbenchError as exc:
            self.notes.append(f"benchmark kernels not staged: {exc}")
            return
        names = [n for n in kernels.KERNELS if (kdir / n).exists()]
        if not names:
            return
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=9) as tar:
            for name in names:
                tar.add(kdir / name, arcname=name)
        t0 = time.monotonic()
        staged = f"{GUEST_KERNEL_DIR}/kernels.tar.gz"
        self.agent.put(staged, buf.getvalue())
        res = self.agent.exec(["sh", "-c", 'tar -xzf "$1" -C "$2" && rm -f "$1"', "sh",
                               staged, GUEST_KERNEL_DIR], timeout=60)
        if res.exit != 0:
            raise AgentError(f"{self.label}: unpacking the kernels failed: {res.stderr.strip()}")
        self.stage_s = time.monotonic() - t0
        self._kernel_names = names

    # -- inside the guest ----------------------------------------------------------------
    def capabilities(self) -> Capabilities:
        """A guest virtbench boots has everything: its own scratch disk, a tap on a path
        of namespaces with a remote one behind it, its sshd, QMP stop/cont, root inside."""
        return super().capabilities().with_(
            scratch=can("disk"), scratch_device=can(f"the {self.values['disk']} scratch disk"),
            net_path=can(self.values["nic"]), remote_peer=can("a namespace behind the tap"),
            ssh_target=can("the guest's sshd"), pause=can("QMP stop/cont"),
            drop_caches=can("the guest's, then the host's"),
            memory_size=can(f"mem={self.values['mem']}"), pair_end=can(),
            exit_profile=self._exit_profile_answer(),
            guest_root_io=can("root in the guest: port 0xed and the HPET of QEMU's device model"))

    def kernel_path(self, name: str) -> str:
        return f"{GUEST_KERNEL_DIR}/{name}"

    @property
    def peer_ip(self) -> str | None:
        """The host-side address the guest reaches over its NIC (the network benchmark peer)."""
        return self.ns.host_ip if self.ns else None

    @property
    def guest_ip(self) -> str | None:
        return self.ns.guest_ip if self.ns else None

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

    def scratch_backing(self) -> str | None:
        """The host file (raw or qcow2 image) or loop device behind the scratch disk."""
        if self.workdir is None:
            return None
        if self.values["backing"] == "device":
            loops = self._manifest.get("loops") or []
            return loops[-1] if loops else None
        name = "scratch.qcow2" if self.values["backing"] == "qcow2" else "scratch.raw"
        return str(self.workdir / name)

    def scratch_cache_mode(self) -> str | None:
        return self.values["cache"]

    def memory_bytes(self) -> int | None:
        """The guest's RAM (the mem option)."""
        return size_bytes(self.values["mem"])

    def host_memory_reserved(self) -> int:
        return size_bytes(self.values["mem"])

    def net_path(self) -> NetPath:
        """Guest NIC <-> tap in the host-side namespace, plus a remote namespace behind it."""
        if self._net is None:
            if self.ns is None or self.agent is None:
                raise VirtbenchError(f"{self.label}: net_path() before start()")
            from ... import netpath
            topo = netpath.Topology()
            self._topology = topo
            remote_ns = self.ns.name + "-r"
            self._manifest.setdefault("extra_netns", []).append(remote_ns)
            self._save_manifest()
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

    def ssh_target(self) -> SshTarget:
        """The guest's own sshd (started at boot) with the image's client key."""
        if self.ns is None or self.image is None:
            raise VirtbenchError(f"{self.label}: ssh_target() before start()")
        pub = self.image.dir / "ssh_host_ed25519_key.pub"   # made with the image
        host_key = " ".join(pub.read_text().split()[:2]) if pub.exists() else ""
        return SshTarget(address=self.ns.guest_ip, port=22, user="root",
                         identity=str(self.image.ssh_key), prefix=self.ns.exec_argv([]),
                         host_key=host_key)

    def owns_scratch_filesystem(self) -> bool:
        return True    # the scratch disk is one virtbench made for this guest

    def drop_caches(self) -> None:
        """Drop the guest's page cache, then the host's (the scratch image's pages)."""
        super().drop_caches()
        try:
            subprocess.run(["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"],
                           capture_output=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired):
            pass

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

    def _apply_tunings(self) -> None:
        """Apply the tunings that take effect after boot (I/O scheduler, NIC offloads and
        coalescing), then read every tuning back in the guest into `tunings_read`. A
        requested tuning the guest does not report as asked fails the start, one line
        naming each such tuning and what the guest reports."""
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
        if bad:
            raise EnvironmentUnusable(f"{self.label}: " + "; ".join(bad))

    def metadata(self) -> dict:
        ver, line = version.qemu_version()
        meta = {
            "qemu_version": ver, "qemu": line,
            "accel": self.accel, "accel_reason": self.accel_reason,
            "machine": self.machine, "cpu_model": self.cpu,
            "vcpus": self.values["vcpus"], "mem": self.values["mem"],
            "disk": self.values["disk"], "nic": self.values["nic"],
            "cache": self.values["cache"], "aio": self.values["aio"],
            "backing": self.values["backing"], "vhost": self.vhost,
            "agent_transport": self.values["agent"],
            "boot_s": self.boot_s, "guest_uptime_at_ready_s": self.guest_uptime_at_ready,
            "image_recipe": self.image.recipe_hash if self.image else None,
            "guest_kernel_package": self.image.kernel_version if self.image else None,
            "kernels_staged": list(self._kernel_names), "kernels_stage_s": self.stage_s,
            "qemu_argv": list(getattr(self, "argv", [])),
            "tunings": dict(self.tunings_read),
        }
        if self.agent is not None:
            try:
                meta["guest_disk_drivers"] = self.scratch_drivers()
                meta["guest_nic_drivers"] = self.nic_drivers()
            except AgentError:
                pass
            meta.update(fingerprint.collect(self))
        meta["host_kernel"] = os.uname().release
        if not meta.get("guest_kernel"):
            meta["guest_kernel"] = guest_kernel_release(meta.get("kernel")) or (
                self.image.kernel_version if self.image else None)
        return meta
