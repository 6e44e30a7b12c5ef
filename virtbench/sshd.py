"""A private sshd for the `native` environment's end of the network path (scp benchmarks).

Keys are generated per sshd in a temporary directory; no passwords; every cipher the
installed OpenSSH offers is enabled so that each can be measured.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from .errors import VirtbenchError

PORT = 2222


def supported_ciphers() -> list[str]:
    """What this host's OpenSSH client offers (`ssh -Q cipher`)."""
    if not shutil.which("ssh"):
        raise VirtbenchError("ssh not found; install it with: apt-get install openssh-client")
    out = subprocess.run(["ssh", "-Q", "cipher"], capture_output=True, text=True, timeout=10)
    return out.stdout.split()


def keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True,
                   timeout=30)


class Sshd:
    """sshd -D in a namespace (through `prefix`), listening on `address`:PORT."""

    def __init__(self, address: str, prefix: list[str]):
        sshd = shutil.which("sshd") or "/usr/sbin/sshd"
        if not Path(sshd).exists():
            raise VirtbenchError("sshd not found; install it with: apt-get install openssh-server")
        self.dir = Path(tempfile.mkdtemp(prefix="vb-sshd-"))
        keygen(self.dir / "host_key")
        keygen(self.dir / "client_key")
        (self.dir / "authorized_keys").write_text((self.dir / "client_key.pub").read_text())
        (self.dir / "authorized_keys").chmod(0o600)
        config = self.dir / "sshd_config"
        config.write_text("\n".join([
            f"Port {PORT}", f"ListenAddress {address}", f"HostKey {self.dir / 'host_key'}",
            f"AuthorizedKeysFile {self.dir / 'authorized_keys'}", "PermitRootLogin prohibit-password",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no",
            "StrictModes no", f"PidFile {self.dir / 'sshd.pid'}", "Subsystem sftp internal-sftp",
            "Ciphers " + ",".join(supported_ciphers()), ""]))
        Path("/run/sshd").mkdir(exist_ok=True)   # privilege separation directory
        self.proc = subprocess.Popen(prefix + [sshd, "-D", "-e", "-f", str(config)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     start_new_session=True)
        self.identity = str(self.dir / "client_key")
        deadline = time.monotonic() + 10
        while not self._listening(prefix):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                err = b""
                if self.proc.poll() is not None:
                    err = self.proc.stderr.read()
                self.stop()
                last = (err.decode(errors="replace").strip() or "not listening in time").splitlines()[-1]
                raise VirtbenchError(f"sshd did not start: {last}")
            time.sleep(0.05)

    @staticmethod
    def _listening(prefix: list[str]) -> bool:
        out = subprocess.run(prefix + ["ss", "-H", "-ltn", f"sport = :{PORT}"], capture_output=True,
                             text=True, timeout=10).stdout
        return bool(out.strip())

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)
