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
import subprocess

from ...machinery.machine import fingerprint, hypervisor, meminfo
from ...machinery.kernels import build as kernels
from ...core.capabilities import Capabilities, can, cannot
from ...core.errors import VirtbenchError
from ...machinery.host.net.netpath_types import NetPath
from ...machinery.host.net.sshsession import SshOptions, SshSession
from ...machinery.agent.transport import AGENT_SOURCE, SubprocessAgent
from .base import Environment, Option, block_device_under, drop_page_cache

AUTO_SCRATCH = "auto"   # a private directory made on the target for this run (mktemp -d)
SCRATCH_TEMPLATE = "/var/tmp/virtbench-scratch-XXXXXXXX"   # /var/tmp: on disk, unlike /tmp
# prints each of its arguments that is no program on the target (PATH, or an sbin directory
# a login shell of another user may lack on PATH); the names are arguments, never code
LACKING = ('for t; do command -v "$t" >/dev/null 2>&1 || [ -x "/usr/sbin/$t" ] || '
           '[ -x "/sbin/$t" ] || echo "$t"; done')

# What may reach ssh's command line: no option-like leading '-', no white space, no shell
# metacharacters (the target's shell sees the remote command), in the forms ssh accepts.
_HOST = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,252})|\[?[0-9A-Fa-f:.]+(%[A-Za-z0-9]+)?\]?")
_USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?")
_PATH = re.compile(r"[A-Za-z0-9_./~+-]+")


def _host(text: str) -> str:
    """A host name, an ssh_config alias or an IPv4/IPv6 address; nothing ssh could read as an
    option or the target's shell as a command."""
    if not _HOST.fullmatch(text):
        raise ValueError("a host name or address: letters, digits, '.', '-', '_' (or an IPv6 "
                         "address), not starting with '-'")
    return text


def _user(text: str) -> str:
    if not _USER.fullmatch(text):
        raise ValueError("a login name: letters, digits, '.', '_', '-', starting with a letter "
                         "or '_'")
    return text


def _path(text: str) -> str:
    """A file or directory name passed to ssh or to the target: no white space, no shell
    metacharacters, not starting with '-'."""
    if text and (text.startswith("-") or not _PATH.fullmatch(text)):
        raise ValueError("a path of letters, digits and . / _ ~ + -, not starting with '-'")
    return text


def _scratch(text: str) -> str:
    if text == AUTO_SCRATCH:
        return text
    _path(text)
    if not text.startswith("/"):
        raise ValueError("an absolute path on the target, or auto")
    return text


def _port(text: str) -> int:
    port = int(text)
    if not 1 <= port <= 65535:
        raise ValueError("a TCP port is 1 to 65535")
    return port


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
                        "to join another instance by; pair native or qemu instances"),
        guest_root_io=cannot(f"{who}: the target may be bare metal, whose ports and registers "
                             "the ioport primitives must not touch; they run in qemu guests"))
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
        "host": Option("", convert=_host, help="the target's address or name (required)",
                       in_label=False),
        "user": Option("root", convert=_user, help="login user (root: caches are dropped)",
                       in_label=False),
        "port": Option(22, convert=_port, help="sshd's port", in_label=False),
        "key": Option("", convert=_path, help="private key file (default: your agent and "
                      "~/.ssh)", in_label=False),
        "known_hosts": Option("", convert=_path, help="known_hosts file holding the target's "
                              "host key (default: ~/.ssh/known_hosts)", in_label=False),
        "scratch": Option(AUTO_SCRATCH, convert=_scratch, help="directory on the target's file "
                          "system under test (auto: a private one made for this run under "
                          "/var/tmp, removed after)", in_label=False),
        "peer": Option("", convert=lambda t: _host(t) if t else t, help="this host's address "
                       "as the target reaches it: network benchmarks run their server end "
                       "here, on that address", in_label=False),
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
        self._resolved = False
        self._built = None                    # our kernels, built here (prepare)
        self._scratch: str | None = None      # scratch=auto: made on the target at start

    @property
    def ssh_options(self) -> SshOptions:
        v = self.values
        return SshOptions(host=v["host"], user=v["user"], port=v["port"], key=v["key"] or None,
                          known_hosts=v["known_hosts"] or None)

    @property
    def kind_label(self) -> str:
        what = f"ssh-{self.platform.label}" if self.platform else "ssh"
        return f"{what}/{self.values['host']}"

    def _session(self) -> SshSession:
        """The connection to the target (one per life: made on first need, closed by stop(),
        which removes what was staged through it)."""
        if self.session is None:
            self.session = SshSession(self.ssh_options)
            self.resources.add("the ssh session", self._close_session)
        return self.session

    def _close_session(self) -> None:
        session, self.session = self.session, None
        self._remote_kernels = None
        if session is not None:
            session.close()           # removes the staged directory, ends the master

    def resolve(self) -> None:
        """Connect, check python3 and the architecture, read the platform (for the label).
        Bad host, key, host key or a target without python3: one line, before anything runs.
        Once: later starts reuse what it read."""
        if self._resolved:
            return
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
        self._resolved = True

    def prepare(self) -> None:
        self._built = kernels.build()

    def missing_tools(self, tools) -> list[str]:
        """The target's, asked over the connection resolve() made (our kernels are staged
        at start); none known before it connected."""
        wanted = [t for t in dict.fromkeys(tools) if t not in kernels.PROGRAMS]
        if not wanted or self.session is None:
            return []
        res = self.session.run(["sh", "-c", LACKING, "sh", *wanted], timeout=60)
        if res.exit != 0:
            raise VirtbenchError(f"cannot ask {self.ssh_options.where} which programs it has: "
                                 f"{(res.stderr.strip() or '(no output)').splitlines()[-1]}")
        return [t for t in res.stdout.split() if t in wanted]

    def tools_place(self) -> str | None:
        return self.values["host"]

    def launch(self) -> None:
        s = self._session()
        files = {"agent.py": AGENT_SOURCE}
        files.update({name: self._built / name for name in kernels.KERNELS})
        where = s.stage(files)
        self._remote_kernels = where
        remove = ["--remove-on-exit", where]
        if self.values["scratch"] == AUTO_SCRATCH:
            res = s.run(["mktemp", "-d", SCRATCH_TEMPLATE], timeout=30)
            if res.exit != 0:
                raise VirtbenchError(f"cannot create a scratch directory on "
                                     f"{self.ssh_options.where}: {res.stderr.strip()}")
            self._scratch = res.stdout.strip()
            self.resources.add("the remote scratch directory", self._remove_scratch)
            remove += ["--remove-on-exit", self._scratch]
        # The agent deletes the staged directory (and a scratch of its own) when its stdin
        # closes: at stop, and also when virtbench dies (its ssh client's stdin closes with it).
        self.attach(SubprocessAgent(s.base + ["--", "python3", f"{where}/agent.py", "--stdio",
                                              *remove], name=self.label))

    def _remove_scratch(self) -> None:
        scratch, self._scratch = self._scratch, None
        if scratch is not None and self.session is not None and not self.session.unreachable:
            try:
                self.session.run(["rm", "-rf", "--", scratch], timeout=120)
            except (VirtbenchError, subprocess.TimeoutExpired, OSError):
                pass

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
        if self.values["scratch"] == AUTO_SCRATCH:
            if self._scratch is None:
                raise VirtbenchError(f"{self.label}: scratch_dir() before start()")
            return self._scratch
        d = self.values["scratch"]
        res = self.exec(["mkdir", "-p", d], timeout=30)
        if res.exit != 0:
            raise VirtbenchError(f"{self.label}: cannot create scratch={d}: {res.stderr.strip()}")
        return d

    def scratch_device(self) -> str | None:
        return block_device_under(self, self.scratch_dir())

    def drop_caches(self) -> None:
        drop_page_cache(self)

    def net_path(self) -> NetPath:
        peer = self.values["peer"]
        if not peer:
            raise self._cannot("net_path")
        return NetPath(env_address=self.values["host"], host_address=peer, host_prefix=[],
                       nic="the target's own")

    def memory_bytes(self) -> int | None:
        res = self.exec(["cat", "/proc/meminfo"], timeout=30)
        return meminfo.available(res.stdout) if res.exit == 0 else None

    def metadata(self) -> dict:
        facts = dict(self._facts) or fingerprint.collect(self)
        if self.platform is not None:
            facts.update(fingerprint.platform_facts(self.platform))
        facts["ssh_target"] = self.ssh_options.where
        return facts
