"""`ssh`: any Linux machine or guest virtbench did not start (a Xen domU, a VirtualBox or
VMware VM, a cloud VM, a remote bare-metal host), reached as its users reach it.

resolve() connects once (host key verified, python3 found) and reads what the target runs on,
so the label says it (`ssh-xen-pv/NAME`) before the plan is printed. start() stages the agent
and our static kernels in a private directory on the target and runs the agent over the
same multiplexed SSH connection; stop() ends it and removes what was staged.

Network benchmarks run their server end on this host, on the address the target reaches it
by (peer=ADDR): the path measured is the real one between them. What it cannot offer, it says:
no network path without peer=, no pausing (the machine is not ours to stop), no host-side view
of its disk.
"""
from __future__ import annotations

import re

from .. import fingerprint, hypervisor, kernels
from ..capabilities import Capabilities, can, cannot
from ..errors import AgentError, VirtbenchError
from ..netpath_types import NetPath
from ..sshsession import SshOptions, SshSession
from ..transport import AGENT_SOURCE, SubprocessAgent
from .base import Environment, Option

DEFAULT_SCRATCH = "/var/tmp/virtbench-scratch"


def _port(text: str) -> int:
    port = int(text)
    if not 1 <= port <= 65535:
        raise ValueError("a TCP port is 1 to 65535")
    return port


def _name(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}", text):
        raise ValueError("letters, digits, '.', '_' and '-', at most 63")
    return text


def over_ssh(values: dict, who: str) -> Capabilities:
    """What a machine measured over SSH offers, from its options alone (scratch, peer, user;
    `who` names the kind in the reasons): a network path only with peer=, cache dropping only
    as root; not paused, no remote peer behind it, no pairing. A kind that reaches its
    machine over SSH but can pause it (libvirt) widens this."""
    caps = Capabilities.none(f"environment {who}").with_(
        scratch=can("directory"),
        scratch_device=can("the block device under scratch, if any"),
        remote_peer=cannot(f"{who}: ping-hops needs a remote machine one hop behind this "
                           "host, which a machine reached over SSH does not have; run "
                           "ping-hops on native or qemu"),
        ssh_target=cannot(f"{who}: scp to a target over its own sshd is not supported yet; "
                          "run scp on native or qemu"),
        pause=cannot(f"{who}: the target is not virtbench's to pause; it keeps running "
                     "while other environments measure"),
        memory_size=can("the target's MemAvailable"),
        pair_end=cannot(f"{who}: its network path has no host-side namespace of virtbench's "
                        "to join another instance by; pair native or qemu instances"))
    scratch, peer, user = values["scratch"], values["peer"], values["user"]
    if scratch.startswith("/dev/"):
        no = cannot(f"{who}: scratch={scratch} names a device, which is not supported yet; "
                    "name a directory on its file system (scratch=DIR)")
        caps = caps.with_(scratch=no, scratch_device=no)
    if peer:
        caps = caps.with_(net_path=can(f"the target to this host at {peer}"))
    else:
        caps = caps.with_(net_path=cannot(
            f"{who}: network benchmarks need peer=ADDR, this host's address as the target "
            "reaches it"))
    if user == "root":
        caps = caps.with_(drop_caches=can())
    else:
        caps = caps.with_(drop_caches=cannot(
            f"{who}: dropping the page cache needs root, not user={user}; set user=root, "
            "or use cache=in"))
    return caps


class Ssh(Environment):
    kind = "ssh"
    summary = ("a Linux machine or guest virtbench did not start, over SSH (Xen, VirtualBox, "
               "VMware, cloud VMs, remote bare metal)")
    options = {
        "host": Option("", help="the target's address or name (required)", in_label=False),
        "user": Option("root", help="login user (root: caches are dropped)", in_label=False),
        "port": Option(22, convert=_port, help="sshd's port", in_label=False),
        "key": Option("", help="private key file (default: your agent and ~/.ssh)",
                      in_label=False),
        "known_hosts": Option("", help="known_hosts file holding the target's host key "
                              "(default: ~/.ssh/known_hosts)", in_label=False),
        "scratch": Option(DEFAULT_SCRATCH, help="directory on the target's file system under "
                          "test", in_label=False),
        "peer": Option("", help="this host's address as the target reaches it: network "
                       "benchmarks run their server end here, on that address", in_label=False),
        "name": Option("", convert=_name, help="the label's name part (default: host)",
                       in_label=False),
    }

    def __init__(self, spec):
        super().__init__(spec)
        if not self.values["host"]:
            raise VirtbenchError(f"environment {spec}: host= is required, e.g. "
                                 "ssh:host=192.0.2.10,name=xen-guest")
        self.session: SshSession | None = None
        self.platform: hypervisor.Platform | None = None
        self._remote_kernels: str | None = None
        self._facts: dict = {}

    @property
    def ssh_options(self) -> SshOptions:
        v = self.values
        return SshOptions(host=v["host"], user=v["user"], port=v["port"], key=v["key"] or None,
                          known_hosts=v["known_hosts"] or None)

    @property
    def label(self) -> str:
        name = self.values["name"] or self.values["host"]
        what = f"ssh-{self.platform.label}" if self.platform else "ssh"
        return f"{what}/{name}"

    def _session(self) -> SshSession:
        if self.session is None:
            self.session = SshSession(self.ssh_options)
        return self.session

    def resolve(self) -> None:
        """Connect, check python3 and the architecture, read the platform (for the label).
        Bad host, key, host key or a target without python3: one line, before anything runs."""
        s = self._session()
        try:
            s.check()
            arch = s.run(["uname", "-m"], timeout=30).stdout.strip()
            if arch != "x86_64":
                raise VirtbenchError(f"{self.ssh_options.where} is {arch or 'unknown'}: our "
                                     "kernels are built for x86_64")
            out = s.run(["sh", "-c", fingerprint.SCRIPT], timeout=60)
        except BaseException:
            self.stop()          # nothing of a failed connection stays behind
            raise
        if out.exit == 0 and "==end" in out.stdout:
            self._facts = fingerprint.parse(out.stdout)
            self.platform = hypervisor.detect(fingerprint.split_sections(out.stdout))

    def start(self) -> None:
        if self.platform is None:
            self.resolve()
        s = self._session()
        built = kernels.build()
        files = {"agent.py": AGENT_SOURCE}
        files.update({name: built / name for name in kernels.KERNELS})
        where = s.stage(files)
        self._remote_kernels = where
        # The agent deletes the staged directory when its stdin closes: at stop, and also
        # when virtbench dies (its ssh client's stdin closes with it).
        self.agent = SubprocessAgent(s.base + ["--", "python3", f"{where}/agent.py", "--stdio",
                                               "--remove-on-exit", where], name=self.label)
        self.agent.ping()

    def stop(self) -> None:
        if self.agent is not None:
            try:
                self.agent.close()
            except (AgentError, OSError):
                pass
            self.agent = None
        if self.session is not None:
            self.session.close()      # removes the staged directory, ends the master
            self.session = None
        self._remote_kernels = None

    def is_alive(self) -> bool:
        return self.agent is not None and self.agent.proc.poll() is None

    def lost_reason(self) -> str:
        if self.agent is None:
            return "the ssh agent is not running"
        return (f"the SSH connection to {self.ssh_options.where} ended "
                f"(ssh status {self.agent.proc.poll()})")

    def kernel_path(self, name: str) -> str:
        if self._remote_kernels is None:
            raise RuntimeError(f"{self.label}: kernel_path before start")
        return f"{self._remote_kernels}/{name}"

    def capabilities(self) -> Capabilities:
        return over_ssh(self.values, "ssh")

    def scratch_dir(self) -> str:
        d = self.values["scratch"]
        res = self.exec(["mkdir", "-p", d], timeout=30)
        if res.exit != 0:
            raise VirtbenchError(f"{self.label}: cannot create scratch={d}: {res.stderr.strip()}")
        return d

    def net_path(self) -> NetPath:
        peer = self.values["peer"]
        if not peer:
            raise VirtbenchError(f"environment {self.label}: network benchmarks need peer=ADDR, "
                                 "this host's address as the target reaches it")
        return NetPath(env_address=self.values["host"], host_address=peer, host_prefix=[],
                       nic="the target's own")

    def memory_bytes(self) -> int | None:
        res = self.exec(["cat", "/proc/meminfo"], timeout=30)
        return fingerprint.available_bytes(res.stdout) if res.exit == 0 else None

    def metadata(self) -> dict:
        facts = dict(self._facts) or fingerprint.collect(self)
        if self.platform is not None:
            facts["platform"] = self.platform.label
            facts["platform_evidence"] = "; ".join(self.platform.evidence)
        facts["ssh_target"] = self.ssh_options.where
        return facts
