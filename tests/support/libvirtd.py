"""A private libvirtd for the tests: no systemd here, so the daemon is run by hand, with its
own configuration, run, state, log and cache directories bind-mounted over the system's in
a private mount namespace (nothing of the host's libvirt is read or written), its socket in
a temporary directory, and stopped by its PID.

    with PrivateLibvirtd(tmp_path) as daemon:
        conn = libvirt.open(daemon.uri)     # qemu:///system?socket=...
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

LIBVIRTD_CONF = """\
unix_sock_dir = "{sock_dir}"
unix_sock_ro_perms = "0700"
unix_sock_rw_perms = "0700"
auth_unix_rw = "none"
auth_unix_ro = "none"
log_outputs = "3:file:{log}"
"""

# QEMU as root with no relabelling (the image sits in root's cache directory), its stdio to
# plain files (no virtlogd to run beside it)
QEMU_CONF = """\
user = "root"
group = "root"
dynamic_ownership = 0
security_driver = "none"
stdio_handler = "file"
"""

PRIVATE = {"etc": "/etc/libvirt", "run": "/run/libvirt", "lib": "/var/lib/libvirt",
           "log": "/var/log/libvirt", "cache": "/var/cache/libvirt"}


class PrivateLibvirtd:
    def __init__(self, root: Path, ready_timeout: float = 30):
        self.root = Path(root)
        self.ready_timeout = ready_timeout
        self.proc: subprocess.Popen | None = None
        self._made: list[str] = []        # system mount points we had to create (empty dirs)

    @property
    def socket(self) -> Path:
        return self.root / "libvirt-sock"

    @property
    def uri(self) -> str:
        return f"qemu:///system?socket={self.socket}"

    @property
    def log(self) -> Path:
        return self.root / "libvirtd.log"

    def start(self) -> "PrivateLibvirtd":
        libvirtd = shutil.which("libvirtd") or "/usr/sbin/libvirtd"
        if not os.path.exists(libvirtd):
            raise RuntimeError("libvirtd not installed: apt-get install libvirt-daemon-system")
        for name, target in PRIVATE.items():
            (self.root / name).mkdir(parents=True, exist_ok=True)
            if not os.path.isdir(target):
                self._made.append(target)
        (self.root / "etc" / "libvirtd.conf").write_text(
            LIBVIRTD_CONF.format(sock_dir=self.root, log=self.log))
        (self.root / "etc" / "qemu.conf").write_text(QEMU_CONF)
        binds = " && ".join(f"mkdir -p {target} && mount --bind {self.root / name} {target}"
                            for name, target in PRIVATE.items())
        # the configuration as the daemon sees it, inside its mount namespace
        script = (f"{binds} && exec {libvirtd} --config /etc/libvirt/libvirtd.conf "
                  f"--pid-file {self.root / 'libvirtd.pid'}")
        with open(self.root / "libvirtd.out", "wb") as out:
            self.proc = subprocess.Popen(
                ["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True)
        deadline = time.monotonic() + self.ready_timeout
        while not self.socket.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                out = (self.root / "libvirtd.out").read_text(errors="replace")
                self.stop()
                raise RuntimeError(f"libvirtd did not start: {out.strip()[-500:]}")
            time.sleep(0.1)
        return self

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
            self.proc = None
        for target in self._made:          # the empty mount points, if we made them
            try:
                os.rmdir(target)
            except OSError:
                pass
        self._made = []

    def __enter__(self) -> "PrivateLibvirtd":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

