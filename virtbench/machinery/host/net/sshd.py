"""A private sshd for the `native` environment's end of the network path (scp benchmarks).

Keys are generated per sshd in a private directory of the work root (removed at stop, swept
after a crash); no passwords; every cipher the installed OpenSSH offers is enabled so that
each can be measured.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from ....core.errors import VirtbenchError
from .. import watch
from ..executor import LOCAL, HostExecutor
from .netpath import HostServer

PORT = 2222


def supported_ciphers(host: HostExecutor = LOCAL) -> list[str]:
    """What this host's OpenSSH client offers (`ssh -Q cipher`, run through `host`)."""
    out = host.run(["ssh", "-Q", "cipher"], timeout=10)
    if out.exit == 127:
        raise VirtbenchError("ssh not found; install it with: apt-get install openssh-client")
    return out.stdout.split()


def keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True,
                   timeout=30)


class Sshd:
    """sshd -D in a namespace (through `prefix`), listening on `address`:`port`."""

    def __init__(self, address: str, prefix: list[str], port: int = PORT,
                 directory: str | None = None):
        sshd = shutil.which("sshd") or "/usr/sbin/sshd"
        if not Path(sshd).exists():
            raise VirtbenchError("sshd not found; install it with: apt-get install openssh-server")
        # keys and config in a new private directory: in `directory` if given (a test's),
        # else in the work root, where the sweep removes it if virtbench is killed
        self.dir = Path(tempfile.mkdtemp(prefix="vb-sshd-", dir=directory)) if directory \
            else watch.private_dir("vbsshd-")
        keygen(self.dir / "host_key")
        keygen(self.dir / "client_key")
        (self.dir / "authorized_keys").write_text((self.dir / "client_key.pub").read_text())
        (self.dir / "authorized_keys").chmod(0o600)
        config = self.dir / "sshd_config"
        config.write_text("\n".join([
            f"Port {port}", f"ListenAddress {address}", f"HostKey {self.dir / 'host_key'}",
            f"AuthorizedKeysFile {self.dir / 'authorized_keys'}", "PermitRootLogin prohibit-password",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no",
            "StrictModes no", f"PidFile {self.dir / 'sshd.pid'}", "Subsystem sftp internal-sftp",
            "Ciphers " + ",".join(supported_ciphers()), ""]))
        Path("/run/sshd").mkdir(exist_ok=True)   # privilege separation directory
        self.identity = str(self.dir / "client_key")
        self.address, self.port = address, port
        try:
            self.server = HostServer([sshd, "-D", "-e", "-f", str(config)], port, prefix)
        except VirtbenchError as exc:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise VirtbenchError(f"sshd did not start: {exc}") from None
        if not directory:    # if virtbench is killed, the sweep kills this sshd (its PID
            watch.update_manifest(self.dir, sshd_pid=self.server.proc.pid)   # checked first)

    @property
    def host_key(self) -> str:
        """This sshd's public host key, "TYPE BASE64"."""
        return " ".join((self.dir / "host_key.pub").read_text().split()[:2])

    def known_hosts_line(self) -> str:
        """This sshd's host key as a known_hosts line (for clients that verify it)."""
        kind, key = (self.dir / "host_key.pub").read_text().split()[:2]
        host = self.address if self.port == 22 else f"[{self.address}]:{self.port}"
        return f"{host} {kind} {key}\n"

    def stop(self) -> None:
        self.server.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
