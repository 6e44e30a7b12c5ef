"""The network path under test and the way to an environment's sshd, as benchmarks see them.

Plain data: environments make them (net_path(), ssh_target()), netpath builds a NetPath for
native, benchmarks read them; it imports nothing of virtbench, so any layer may use it."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class NetPath:
    """The network path under test, as a network benchmark sees it.

    The environment is one end; the host side of its NIC (a namespace virtbench made, holding
    the tap or the veth peer) is the other, where servers (iperf3, sockperf, sshd) run; a
    `remote` namespace one veth hop behind the host side stands for a second machine (the
    Zhang study's "remote host"). Commands at the host side or the remote run as
    `prefix + argv` on the host; commands in the environment go through its agent,
    prefixed by `env_prefix` (native runs its end in a namespace of its own).
    """

    env_address: str
    host_address: str
    host_prefix: list[str]
    env_prefix: list[str] = field(default_factory=list)
    remote_address: str | None = None        # the remote as everyone else reaches it
    remote_prefix: list[str] | None = None
    nic: str = "veth"                         # the device model on the path


@dataclass
class SshTarget:
    """How the host side reaches the environment's sshd (scp benchmarks): run
    `prefix + ["scp", "-i", identity, "-P", port, ...]` on the host."""

    address: str
    port: int
    user: str
    identity: str                # private key file on the host
    prefix: list[str] = field(default_factory=list)
    host_key: str = ""           # the sshd's public host key ("TYPE BASE64"): verified, never
                                 # accepted unseen
