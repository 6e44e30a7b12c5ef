"""`native`: bare metal, the baseline. The agent runs as a local subprocess."""
from __future__ import annotations

import os
import platform
import shutil
import sys

from ...machinery.machine import fingerprint, meminfo
from ...machinery.kernels import build as kernels
from ...machinery.host.net import netns
from ...machinery.host import watch, workroot
from ...machinery.host import tools as hosttools
from ...core.errors import VirtbenchError
from ...core.capabilities import Capabilities, can, cannot
from ...machinery.host.net.netpath_types import NetPath, SshTarget
from ...machinery.host.trusted import file_problem
from ...foundations.stats.aggregate import ClockOffset
from ...machinery.agent.transport import AGENT_SOURCE, SubprocessAgent
from .base import Environment, Option, block_device_under, drop_page_cache

AUTO_SCRATCH = "auto"       # a private directory made for this run in the work root


def scratch_problem(st: os.stat_result, uid: int | None = None) -> str | None:
    """Why a named scratch directory with this lstat() result is not one to write in (pure).
    virtbench writes files of fixed names there as root: in a directory others can write to,
    even a sticky one such as /tmp, they could take those names first (a symlink to a file of
    root's), so only a real directory of ours or root's that no one else can write will do."""
    return file_problem(st, uid, directory=True)


def check_scratch(path: str) -> None:
    """A scratch directory the user named, if it exists: see scratch_problem; and its parent
    must not let others rename it away (workroot.parent_problem). One line and the fix
    otherwise. Checked before virtbench makes it and again after (a name another user took
    first in a sticky directory is refused then)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    why = scratch_problem(st)
    if why is None:
        parent = os.path.dirname(os.path.abspath(path))
        problem = workroot.parent_problem(os.stat(parent))
        why = f"is in {parent}, which {problem}" if problem else None
    if why:
        raise VirtbenchError(f"scratch directory {path} {why}; name a directory only you can "
                             f"write (virtbench makes it if missing), or leave scratch= out "
                             f"(a private one is made)")


def instance_scratch(scratch: str, i: int) -> str:
    """Instance i's own scratch directory under the environment's scratch directory."""
    return os.path.join(scratch, f"virtbench-instance-{i}")


class Native(Environment):
    kind = "native"
    summary = "this host, no virtualization layer added (the baseline)"
    options = {
        "scratch": Option(AUTO_SCRATCH, help="directory on the file system under test (auto: "
                          "a private one made in the work root for this run, removed after)",
                          in_label=False),
    }

    _topology = None
    _sshd = None
    _instance_dir: str | None = None     # made for instance i of a group: removed when empty
    _instance_held = None
    _private_scratch = None              # scratch=auto: the directory made, removed at stop

    def resolve(self) -> None:
        """A scratch directory named that virtbench must not write in is bad input: refused
        before the run exists (one line, exit 2)."""
        if self.values["scratch"] != AUTO_SCRATCH:
            check_scratch(self.values["scratch"])

    def prepare(self) -> None:
        netns.sweep_stale()          # what a killed run left: its namespaces,
        watch.sweep_private()        # its scratch, its sshd's keys
        self._kernel_dir = kernels.build()

    def launch(self) -> None:
        self.attach(SubprocessAgent([sys.executable, str(AGENT_SOURCE), "--stdio"],
                                    name=self.label))

    def _remove_instance_dir(self) -> None:
        self._instance_held = None
        try:
            os.rmdir(self._instance_dir)      # only when the benchmarks left it empty
        except OSError:
            pass

    def is_alive(self) -> bool:
        return self.agent is not None and self.agent.proc.poll() is None

    def clock_offset(self, rounds: int = 3) -> ClockOffset | None:
        """The agent is a child of this process on this kernel: the host's own clock."""
        return ClockOffset(0.0, 0.0) if self.agent is not None else None

    def lost_reason(self) -> str:
        if self.agent is None:
            return "the native agent is not running"
        return f"the native agent exited (status {self.agent.proc.poll()})"

    def pin_threads(self, bench, params: dict) -> list[tuple[int, int]] | None:
        """Our kernels (their processes inherit the agent's affinity) get CPUs of their own;
        other tools run on any CPU."""
        if self.agent is None:
            return None
        ours = set(getattr(bench, "tools", ())) & set(kernels.KERNELS)
        need = max(1, int(params.get("processes", 1) or 1)) if ours else 0
        return [(self.agent.proc.pid, need)]

    def missing_tools(self, tools) -> list[str]:
        """The host's: our kernels are built by virtbench, the rest must be installed."""
        return hosttools.missing(t for t in tools if t not in kernels.PROGRAMS)

    def capabilities(self) -> Capabilities:
        """The host itself: a scratch directory, network paths made of namespaces (root),
        cache dropping (root), its memory; never paused."""
        root = os.geteuid() == 0
        no_ns = cannot("native: network paths are network namespaces, which need root; "
                       "run virtbench as root")
        return super().capabilities().with_(
            scratch=can("directory"),
            scratch_device=can("the block device under the scratch directory, if any"),
            net_path=can("veth") if root else no_ns,
            remote_peer=can("a namespace one hop behind the host side") if root else no_ns,
            ssh_target=can("a private sshd in the environment's namespace") if root else no_ns,
            pause=cannot("native is the host itself: it is never paused (nothing of it runs "
                         "between its trials)"),
            drop_caches=can() if root else cannot(
                "native: dropping the page cache needs root; run virtbench as root, or use "
                "cache=in"),
            memory_size=can("the host's MemAvailable"),
            pair_end=can() if root else no_ns,
            guest_root_io=cannot("native: the ioport primitives would write a port and read a "
                                 "register of the host's own hardware; they run in guests only"))

    def net_path(self) -> NetPath:
        if self._topology is None:
            from ...machinery.host.net.netpath import Topology, native_path
            topology = Topology()
            self._topology = topology
            self.resources.add("the network path", self._delete_topology)
            self._net = native_path(topology, self.net_index)
        return self._net

    def _delete_topology(self) -> None:
        topology, self._topology, self._net = self._topology, None, None
        if topology is not None:
            topology.delete()

    def ssh_target(self) -> SshTarget:
        from ...machinery.host.net.sshd import PORT, Sshd
        path = self.net_path()
        if self._sshd is None:
            self._sshd = Sshd(path.env_address, path.env_prefix)
            self.resources.add("the sshd", self._stop_sshd)
        return SshTarget(address=path.env_address, port=PORT, user="root",
                         identity=self._sshd.identity, prefix=path.host_prefix,
                         host_key=self._sshd.host_key)

    def _stop_sshd(self) -> None:
        sshd, self._sshd = self._sshd, None
        if sshd is not None:
            sshd.stop()

    def kernel_path(self, name: str) -> str:
        return str(self._kernel_dir / name)

    def as_instance(self, i: int) -> None:
        """Instance i works in its own scratch directory (its disk files, BLAST database and
        scp target never meet another instance's) and on its own network subnet."""
        super().as_instance(i)
        given = self.spec.options.get("scratch", AUTO_SCRATCH)
        if given != AUTO_SCRATCH:            # auto: each instance makes its own anyway
            self.values["scratch"] = instance_scratch(given, i)
            self._instance_dir = self.values["scratch"]

    def memory_bytes(self) -> int | None:
        """The host's available memory (MemAvailable), shared by every native instance."""
        return meminfo.host_available()

    def scratch_dir(self) -> str:
        if self.values["scratch"] == AUTO_SCRATCH:
            if self._private_scratch is None:
                self._private_scratch = watch.private_dir("vbscratch-")   # swept if we die
                self.resources.add("the private scratch directory", self._remove_scratch)
            return str(self._private_scratch)
        path = self.values["scratch"]
        check_scratch(path)
        if path == self._instance_dir and self._instance_held is None:
            self._instance_held = self.resources.add("the instance's scratch directory",
                                                     self._remove_instance_dir)
        os.makedirs(path, mode=0o755, exist_ok=True)
        check_scratch(path)          # what is there now is what virtbench will write in
        return path

    def _remove_scratch(self) -> None:
        scratch, self._private_scratch = self._private_scratch, None
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)

    def scratch_device(self) -> str | None:
        return block_device_under(self, self.scratch_dir())

    def drop_caches(self) -> None:
        drop_page_cache(self)

    def metadata(self) -> dict:
        facts = fingerprint.collect(self)
        facts["host_python"] = platform.python_version()
        facts["host_kernel"] = os.uname().release
        return facts
