"""One SSH connection to a machine virtbench did not start (the `ssh` environment's transport).

OpenSSH's own client, as its users run it: their ~/.ssh/config, agent and known_hosts apply,
host keys are always verified (StrictHostKeyChecking=yes, BatchMode: never a prompt), and one
multiplexed master connection (ControlMaster, in a private directory) carries every command,
so a trial pays no handshake. The control socket lives in a private directory of the work root
(guest/watch.py: removed at close, swept after a crash). Every remote command runs under
coreutils `timeout`, so a hung target cannot hang the run. What is staged goes into one
private directory on the target, removed at close.

Pure parts (argv, failure messages) are functions tested on real ssh output; the session is a
small object tests drive against an sshd they start.
"""
from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ....core.errors import VirtbenchError
from .. import watch

CONNECT_TIMEOUT_S = 10


@dataclass(frozen=True)
class SshOptions:
    host: str
    user: str = "root"
    port: int = 22
    key: str | None = None
    known_hosts: str | None = None

    @property
    def where(self) -> str:
        return f"{self.user}@{self.host}:{self.port}"


@dataclass
class SshResult:
    """What one command over SSH returned: its exit status and its output."""

    exit: int
    stdout: str
    stderr: str


def ssh_argv(opts: SshOptions, control_dir: str) -> list[str]:
    """The `ssh` command line up to (not including) the remote command."""
    argv = ["ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
            "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}", "-o", "ServerAliveInterval=5",
            "-o", "ServerAliveCountMax=3", "-o", "ControlMaster=auto",
            "-o", f"ControlPath={control_dir}/cm", "-o", "ControlPersist=10",
            "-p", str(opts.port), "-l", opts.user]
    if opts.key:
        argv += ["-i", opts.key, "-o", "IdentitiesOnly=yes"]
    if opts.known_hosts:
        argv += ["-o", f"UserKnownHostsFile={opts.known_hosts}"]
    return argv + [opts.host]


TIMED_OUT = 124   # coreutils timeout's exit status when it had to stop the command


def remote_command(argv: list[str], timeout_s: float) -> str:
    """One shell word string for the target: `argv` stopped after `timeout_s` seconds (TERM,
    then KILL 5 s later; exit TIMED_OUT). Not `-s KILL` alone: timeout signals its whole
    process group, itself included, and a KILLed timeout leaves ssh only "killed by signal"."""
    return "timeout -k 5 %d %s" % (max(1, int(timeout_s + 0.999)), shlex.join(argv))


# ssh's words for a target that cannot be reached at all (each try costs a ConnectTimeout)
_REFUSED = r"Connection refused"
_NO_ROUTE = r"Connection timed out|Network is unreachable|No route to host"
_UNREACHABLE = f"{_REFUSED}|{_NO_ROUTE}"

_FAILURES = [
    (r"REMOTE HOST IDENTIFICATION HAS CHANGED",
     "the host key of {where} has changed since it was recorded: check the machine, then "
     "update its entry (ssh-keygen -R HOST) in {known}"),
    (r"No \S+ host key is known for|Host key verification failed",
     "the host key of {where} is not known: add it to {known} (e.g. ssh-keyscan -p PORT HOST "
     ">> {known}, after checking its fingerprint), or name a file with known_hosts=PATH"),
    (r"Permission denied \(",
     "{where} refused the key: add the public key to the target's authorized_keys, or name "
     "the right one with key=PATH"),
    (r"Could not resolve hostname",
     "{host} does not resolve: check host= (a name or an address)"),
    (_REFUSED, "nothing listens for ssh at {host}:{port}: start sshd there or fix port="),
    (_NO_ROUTE, "{host}:{port} is unreachable: check the address, the route and any firewall"),
]


def describe_failure(opts: SshOptions, exit_code: int, stderr: str) -> str | None:
    """One line naming what went wrong and the fix, for an ssh that exited 255 (ssh's own
    failure); None when the failure is not ssh's (the remote command's own exit)."""
    if exit_code != 255:
        return None
    known = opts.known_hosts or "~/.ssh/known_hosts"
    for pattern, message in _FAILURES:
        if re.search(pattern, stderr):
            return message.format(where=opts.where, known=known, host=opts.host,
                                  port=opts.port)
    last = stderr.strip().splitlines()[-1:] or ["no message"]
    return f"ssh to {opts.where} failed: {last[0]}"


CONTROL_PREFIX = "vbsshctl-"


def sweep_stale_control_dirs() -> list[str]:
    """Remove the control-socket directories of sessions whose virtbench died (the work root's
    sweep: only directories of ours, whose manifest's owner is gone); their master connections
    end by themselves (ControlPersist)."""
    return watch.sweep(CONTROL_PREFIX)


class SshSession:
    """A master connection to one target, commands over it, a private staging directory."""

    def __init__(self, opts: SshOptions):
        if not shutil.which("ssh"):
            raise VirtbenchError("ssh not found; install it with: apt-get install openssh-client")
        self.opts = opts
        sweep_stale_control_dirs()
        # one socket per session, so its name needs no %C (short: a socket path has 108 bytes)
        self._control = str(watch.private_dir(CONTROL_PREFIX))
        self.base = ssh_argv(opts, self._control)
        self.staging: str | None = None
        # why the last command found the target unreachable (None: it answered): the clean-up
        # on the way out does not wait out another ConnectTimeout per step for it
        self.unreachable: str | None = None

    def run(self, argv: list[str], timeout: float, stdin: bytes | None = None) -> SshResult:
        """Run `argv` on the target; exit 255 with ssh's own failure raises VirtbenchError."""
        try:
            proc = subprocess.run(self.base + ["--", remote_command(argv, timeout)],
                                  input=stdin, capture_output=True, timeout=timeout + 30)
        except subprocess.TimeoutExpired:
            self.unreachable = (f"{self.opts.where} did not answer within {timeout + 30:.0f} s "
                                "(a hung connection or machine)")
            raise VirtbenchError(self.unreachable) from None
        out, err = proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")
        why = describe_failure(self.opts, proc.returncode, err)
        self.unreachable = why if why and re.search(_UNREACHABLE, err) else None
        if why is not None:
            raise VirtbenchError(why)
        return SshResult(proc.returncode, out, err)

    def check(self) -> str:
        """Connect and find python3 (the agent needs it); its version, or VirtbenchError."""
        res = self.run(["python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                       timeout=30)
        if res.exit != 0:
            raise VirtbenchError(f"{self.opts.where} has no working python3 (the agent needs "
                                 "it): install it there, e.g. apt-get install python3")
        return res.stdout.strip()

    def stage(self, files: dict[str, Path]) -> str:
        """Copy local files to the target's private directory (created on first use) under
        the given names; returns the directory."""
        if self.staging is None:
            res = self.run(["mktemp", "-d", "/tmp/virtbench-XXXXXXXX"], timeout=30)
            if res.exit != 0:
                raise VirtbenchError(f"cannot create a directory on {self.opts.where}: "
                                     f"{res.stderr.strip()}")
            self.staging = res.stdout.strip()
        for name, path in files.items():
            if "/" in name or name in ("", ".", ".."):
                raise VirtbenchError(f"bad staged file name {name!r}")
            dest = f"{self.staging}/{name}"
            res = self.run(["sh", "-c", f"cat > {shlex.quote(dest)} && chmod +x "
                            f"{shlex.quote(dest)}"], timeout=300, stdin=path.read_bytes())
            if res.exit != 0:
                raise VirtbenchError(f"staging {name} on {self.opts.where} failed: "
                                     f"{res.stderr.strip()}")
        return self.staging

    def close(self) -> None:
        """Remove what was staged, end the master connection, forget the control socket.
        Never raises: it runs on the way out of failures too. A target the last command found
        unreachable is not tried again (the agent removes the staged directory itself when its
        connection ends)."""
        try:
            if self.staging is not None and self.unreachable is None:
                self.run(["rm", "-rf", "--", self.staging], timeout=60)
                self.staging = None
        except (VirtbenchError, subprocess.TimeoutExpired, OSError):
            pass
        subprocess.run(self.base[:-1] + ["-O", "exit", self.opts.host], capture_output=True,
                       timeout=30, check=False)
        shutil.rmtree(self._control, ignore_errors=True)

    def __enter__(self) -> "SshSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
