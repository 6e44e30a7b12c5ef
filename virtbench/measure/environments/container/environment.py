"""`container:engine=podman[,runtime=auto|crun|runc][,cpus=N][,mem=SIZE][,network=ns|bridge]
[,storage=overlay|bind|volume]`: virtbench's Debian tree run by podman, the agent on the
container's stdio (`podman run -i`), our kernels and the agent bind-mounted read-only.

- runtime=auto takes podman's default runtime (crun) when a probe container runs, else runc;
  the label and a note say which and why (as qemu's accel=auto does).
- network=ns: the container joins the environment end of native's path (a namespace joined
  to virtbench's host-side namespace by veth, a remote namespace behind it), so the path
  differs from native's by the container plumbing only. network=bridge: podman's own bridge
  (netavark) in the host's namespace; the host-side servers run in the host's namespace.
- storage: where the scratch directory lives: overlay (a directory in the container's root
  overlay, its upper layer in podman's storage), bind (a host directory in the work
  directory, bind-mounted), volume (a podman volume). Each is in the label when not overlay.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time

from ....machinery.machine import fingerprint, meminfo
from ....machinery.kernels import build as kernels
from ....machinery.image import variant
from ....core.capabilities import Capabilities, can, cannot
from ....core.errors import AgentError, EnvironmentUnusable, VirtbenchError
from ....machinery.host.net.netpath_types import NetPath
from ....machinery.agent.transport import AGENT_SOURCE
from ....machinery.host import watch
from ..base import Environment, Option, Usability
from . import cleanup, podman
from .agent import PodmanAgent
from .rootfs import rootfs

STORAGES = ("overlay", "bind", "volume")


def _cpus(text: str) -> float:
    v = float(text)
    if not 0 < v <= (os.cpu_count() or 1):
        raise ValueError(f"between 0 and this host's {os.cpu_count()} CPUs")
    return v


def _mem(text: str) -> str:
    if not re.fullmatch(r"\d+[MGmg]", text):
        raise ValueError("write a size such as 512M or 2G")
    return text.upper()


def mem_bytes(size: str) -> int:
    return int(size[:-1]) * {"M": 2**20, "G": 2**30}[size[-1]]


class Container(Environment):
    kind = "container"
    summary = "virtbench's Debian tree in a podman container (no image pulled)"
    options = {
        "engine": Option("podman", choices=("podman",), help="the container engine"),
        "runtime": Option("auto", choices=("auto", "crun", "runc"),
                          help="OCI runtime; auto: podman's default when it works here"),
        "cpus": Option(None, convert=_cpus, help="CPU limit (CFS quota), e.g. 1 or 0.5"),
        "mem": Option(None, convert=_mem, help="memory limit (cgroup), e.g. 1G"),
        "network": Option("ns", choices=("ns", "bridge"),
                          help="ns: veth to virtbench's host-side namespace; bridge: podman's"),
        "storage": Option("overlay", choices=STORAGES, help="where the scratch directory lives"),
    }
    start_timeout = 60.0     # podman run to the agent's first answer
    memory_file: str | None = None   # a sandbox's memory file (its guest memory), if any

    def __init__(self, spec):
        super().__init__(spec)
        self.runtime: str | None = None        # resolved runtime name
        self.runtime_reason = ""
        self.work: watch.WorkDir | None = None     # the work directory and its manifest
        self._name: str | None = None
        self._net: NetPath | None = None
        self._topology = None
        self._volume: str | None = None
        self._bridge_addr: tuple[str, str] | None = None
        self.rootfs_path = None
        self.packages: tuple[str, ...] = ()     # its benchmarks' packages: the tree's variant
        self.argv: list[str] = []

    # -- identity ------------------------------------------------------------------------
    @property
    def kind_label(self) -> str:
        """container-podman/<runtime>, then the limits, network=bridge, storage."""
        parts = [f"{self.kind}-{self.values['engine']}", self.runtime or self.values["runtime"]]
        for name in ("cpus", "mem"):
            if self.values[name] is not None:
                parts.append(f"{name}={self.values[name]:g}" if name == "cpus"
                             else f"{name}={self.values[name]}")
        for name in ("network", "storage"):
            if self.values[name] != self.options[name].default:
                parts.append(f"{name}={self.values[name]}")
        return "/".join(parts)

    @classmethod
    def probe(cls) -> Usability:
        try:
            podman.podman_binary()
        except VirtbenchError as exc:
            return Usability(False, str(exc))
        ver = podman.tool_version(["podman"])
        return Usability(True, "", {"podman_version": ver, "install": podman.INSTALL})

    def runtime_argv(self) -> tuple[str, list[str]]:
        """(--runtime value, --runtime-flag values) for podman."""
        return self.runtime, []

    def resolve(self) -> None:
        if self.runtime is not None:
            return
        podman.podman_binary()
        wanted = self.values["runtime"]
        if wanted != "auto":
            self.runtime, self.runtime_reason = wanted, f"requested (runtime={wanted})"
            return
        root = rootfs()
        probe = podman.probe_runtime("crun", root)
        if probe.usable:
            self.runtime, self.runtime_reason = "crun", "podman's default; a probe container ran"
        else:
            self.runtime, self.runtime_reason = "runc", f"crun failed here: {probe.reason}"
            self.notes.append(f"runc, not crun: {probe.reason}")

    # -- what it offers ------------------------------------------------------------------
    def capabilities(self) -> Capabilities:
        who = f"environment {self.kind}"
        ns = self.values["network"] == "ns"
        return super().capabilities().with_(
            scratch=can("directory"),
            scratch_device=cannot(f"{who}: the scratch directory is on a host file system "
                                  "(no block device of its own); read hdparm figures on native"),
            net_path=can("veth" if ns else "podman bridge"),
            remote_peer=can("a namespace one hop behind the host side") if ns else cannot(
                f"{who}: network=bridge has no remote namespace behind it; use network=ns"),
            ssh_target=cannot(f"{who}: no sshd is started in the container; measure scp on "
                              "native or qemu"),
            pause=cannot(f"{who}: an idle container runs nothing between its trials (its "
                         "agent waits on stdin), so it is never paused"),
            drop_caches=can("the host's page cache (the container shares the host kernel)"),
            memory_size=can(f"mem={self.values.get('mem')}" if self.values.get("mem")
                            else "the host's MemAvailable"),
            pair_end=cannot(f"{who}: guest-to-guest pairs join qemu guests; use qemu"),
            exit_profile=cannot(f"{who}: exit profiles need a guest whose hypervisor virtbench "
                                "runs (qemu); a container has no exits"),
            guest_root_io=cannot(f"{who}: a container shares the host's kernel and hardware; "
                                 "the ioport primitives run in guests only"),
            boot_phases=can("a twin: podman run, its first process's exec, its agent"),
            footprint=can("conmon and every process below it (smaps_rollup)"),
            packages=can("a variant of virtbench's tree with them, built on first use and "
                         "cached by the package set"))

    def add_packages(self, packages) -> None:
        """Run the variant of the tree with these packages too (built at prepare)."""
        self.packages = variant.package_set((*self.packages, *packages))

    # -- life cycle ----------------------------------------------------------------------
    def prepare(self) -> None:
        cleanup.sweep_stale()
        self.rootfs_path = rootfs(progress=variant.open_line("  rootfs: ", _to_stdout),
                                  packages=self.packages)
        self._kernels = kernels.build()
        self.work = watch.WorkDir(cleanup.WORK_PREFIX, cleanup.podman_argv())
        self.resources.add("the work directory", self._remove_work)
        self.work.guard()
        self._name = podman.NAME_PREFIX + self.work.path.name.removeprefix(
            podman.NAME_PREFIX).lower().replace("_", "")
        self.work.add("containers", self._name)

    def _remove_work(self) -> None:
        """The container, its volume and namespaces (if still there), the directory."""
        work, self.work = self.work, None
        self._volume = None
        if work is not None:
            work.remove()

    def launch(self) -> None:
        network = self._setup_network()
        scratch = self._setup_storage()
        runtime, flags = self.runtime_argv()
        cfg = podman.RunConfig(
            name=self._name, rootfs=str(self.rootfs_path), runtime=runtime,
            runtime_flags=flags, network=network, cpus=self.values.get("cpus"),
            mem=self.values.get("mem"), agent=str(AGENT_SOURCE), kernels=str(self._kernels),
            scratch_mount=scratch, owner=cleanup.owner())
        self.argv = [podman.podman_binary(), *podman.global_flags(), *podman.run_argv(cfg)]
        self._t0 = time.monotonic()
        # closing its stdin ends the agent; podman (--rm) then removes the container
        self.attach(PodmanAgent(self.argv, self.work.path / "podman.stderr", name=self.label))

    def ready(self) -> None:
        self._wait_for_agent(self._t0)
        self.boot_s = time.monotonic() - self._t0
        self._after_start()

    def _wait_for_agent(self, t0: float) -> None:
        try:
            self.agent.ping(timeout=self.start_timeout)
        except AgentError as exc:
            try:   # the stream closes a moment before podman's exit is seen
                self.agent.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            why = self._stderr_line() if self.agent.proc.poll() is not None else str(exc)
            raise EnvironmentUnusable(f"{self.label}: the container did not start: {why}")

    def _after_start(self) -> None:
        """Anything to do once the agent answers (the bridge's addresses)."""
        if self.values["network"] == "bridge":
            self._bridge_addr = self._bridge_addresses()

    def _stderr_line(self) -> str:
        path = self.work.path / "podman.stderr" if self.work else None
        text = path.read_text(errors="replace") if path and path.exists() else ""
        return podman.runtime_error(text) if text.strip() else \
            f"podman exited (status {self.agent.proc.returncode})"

    def _setup_network(self) -> str:
        if self.values["network"] == "bridge":
            return "bridge"
        from ....machinery.host.net.netpath import Topology, native_path
        self._topology = Topology()
        self.resources.add("the network path", self._delete_topology)
        path = native_path(self._topology, self.net_index)
        for name in self._topology.names:
            self.work.add("extra_netns", name)
        env_ns = self._topology.names[0]           # native_path adds the env's end first
        self._net = NetPath(env_address=path.env_address, host_address=path.host_address,
                            host_prefix=path.host_prefix, env_prefix=[],
                            remote_address=path.remote_address,
                            remote_prefix=path.remote_prefix, nic="veth")
        return f"ns:/run/netns/{env_ns}"

    def _delete_topology(self) -> None:
        topology, self._topology, self._net = self._topology, None, None
        if topology is not None:
            topology.delete()

    def _setup_storage(self) -> str | None:
        storage = self.values["storage"]
        if storage == "bind":
            path = self.work.path / "scratch"
            path.mkdir()
            return str(path)
        if storage == "volume":
            self._volume = self._name + "-scratch"
            self.work.add("volumes", self._volume)
            proc = podman.run_podman(["volume", "create", self._volume])
            if proc.returncode != 0:
                raise EnvironmentUnusable(f"podman volume create failed: "
                                          f"{podman.runtime_error(proc.stderr)}")
            return self._volume
        return None

    def _bridge_addresses(self) -> tuple[str, str]:
        """(host side = the bridge's gateway, container address) of network=bridge."""
        proc = podman.run_podman(["inspect", "--format",
                                  "{{range .NetworkSettings.Networks}}{{.Gateway}} "
                                  "{{.IPAddress}}{{end}}", self._name])
        parts = proc.stdout.split()
        if proc.returncode != 0 or len(parts) < 2:
            raise EnvironmentUnusable(f"{self.label}: no bridge address: "
                                      f"{podman.runtime_error(proc.stderr)}")
        return parts[0], parts[1]

    def is_alive(self) -> bool:
        return self.agent is not None and self.agent.proc.poll() is None

    def lost_reason(self) -> str:
        if self.agent is None:
            return "the container is not running"
        code = self.agent.proc.poll()
        if code is None:
            return "the agent stopped answering (podman still running)"
        how = "was killed" if code in (137, -9) else f"exited (podman status {code})"
        return f"the container {how}"

    def pin_threads(self, bench, params: dict):
        """The container's init (the agent; our kernels inherit its affinity)."""
        if self.agent is None or self._name is None:
            return None
        proc = podman.run_podman(["inspect", "--format", "{{.State.Pid}}", self._name])
        pid = proc.stdout.strip()
        if proc.returncode != 0 or not pid.isdigit() or pid == "0":
            return None
        ours = set(getattr(bench, "tools", ())) & set(kernels.KERNELS)
        need = max(1, int(params.get("processes", 1) or 1)) if ours else 0
        return [(int(pid), need)]

    # -- what benchmarks use -------------------------------------------------------------
    def kernel_path(self, name: str) -> str:
        return f"{podman.KERNELS_IN}/{name}"

    def measure_boot(self):
        from .costs import measure_boot
        return measure_boot(self)

    def footprint(self):
        from .costs import footprint
        return footprint(self)

    def scratch_dir(self) -> str:
        if self.values["storage"] == "overlay":
            self.exec(["mkdir", "-p", podman.OVERLAY_SCRATCH_IN], timeout=30)
            return podman.OVERLAY_SCRATCH_IN
        return podman.SCRATCH_IN

    def scratch_backing(self) -> str | None:
        """The host directory the scratch data lands in (its device bounds disk figures)."""
        storage = self.values["storage"]
        if self.work is None:
            return None
        if storage == "bind":
            return str(self.work.path / "scratch")
        if storage == "volume" and self._volume:
            proc = podman.run_podman(["volume", "inspect", "--format", "{{.Mountpoint}}",
                                      self._volume])
            return proc.stdout.strip() or None
        proc = podman.run_podman(["info", "--format", "{{.Store.GraphRoot}}"])
        return proc.stdout.strip() or None

    def net_path(self) -> NetPath:
        if self.agent is None:
            raise VirtbenchError(f"{self.label}: net_path() before start()")
        if self.values["network"] == "bridge":
            host, env = self._bridge_addr
            return NetPath(env_address=env, host_address=host, host_prefix=[], env_prefix=[],
                           nic="podman bridge")
        return self._net

    def drop_caches(self) -> None:
        """The container shares the host's kernel: sync inside, drop on the host."""
        self.exec(["sync"], timeout=300)
        subprocess.run(["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"],
                       capture_output=True, timeout=300)

    def memory_bytes(self) -> int | None:
        if self.values.get("mem"):
            return mem_bytes(self.values.get("mem"))
        return meminfo.host_available()

    def metadata(self) -> dict:
        runtime, flags = self.runtime_argv()
        meta = {"engine": "podman", "engine_version": podman.tool_version(["podman"]),
                "runtime": self.runtime, "runtime_path": runtime,
                "runtime_version": podman.tool_version([runtime]),
                "runtime_reason": self.runtime_reason, "runtime_flags": flags,
                "cpus": self.values.get("cpus"), "mem": self.values.get("mem"),
                "network": self.values["network"], "storage": self.values["storage"],
                "rootfs": str(self.rootfs_path) if self.rootfs_path else None,
                "rootfs_packages": (variant.installed(self.rootfs_path)
                                    if self.rootfs_path else []),
                "boot_s": self.boot_s, "podman_argv": list(self.argv),
                "cgroup_limits": self._cgroup_limits()}
        if self.agent is not None:
            meta.update(fingerprint.collect(self))
        meta["host_kernel"] = os.uname().release
        return meta

    def _cgroup_limits(self) -> dict:
        """The limits the container's cgroup holds, read inside it (v1 or v2 files)."""
        if self.agent is None:
            return {}
        script = ("for f in /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max "
                  "/sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us "
                  "/sys/fs/cgroup/cpu.max; do [ -r $f ] && echo \"$f=$(cat $f)\"; done; true")
        try:
            res = self.exec(["sh", "-c", script], timeout=30)
        except AgentError:
            return {}
        return dict(line.split("=", 1) for line in res.stdout.splitlines() if "=" in line)


def _to_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()
