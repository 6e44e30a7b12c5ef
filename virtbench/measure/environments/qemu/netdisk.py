"""Network-backed scratch disks (`backing=nbd`, `backing=nfs`): the server virtbench starts
for one guest, on the raw scratch image in the guest's work directory.

nbd: `qemu-nbd` exports the image on a unix socket in the work directory; QEMU's NBD client
reads it (`file.driver=nbd`). The server's cache and aio modes are the environment's, so
the host side of the disk is the same as backing=raw's, with the NBD protocol between.

nfs: a user-space NFSv3 server, NFS-Ganesha (its VFS back end) with an rpcbind of its own,
exports the directory holding the image; QEMU's libnfs client (`file=nfs://...`) reads the
image over TCP. The kernel's NFS server and client are not used: this host's kernel has
neither (no nfsd, nfs or sunrpc, no modules), and a user-space server needs no mount on the
host. Both daemons run in the guest's network namespace (rpcbind's port 111 and the NFS
ports are the namespace's, QEMU reaches them on its loopback) and in a mount namespace of
their own with a tmpfs on /run (rpcbind's socket and state, Ganesha's), so nothing of theirs
lands on the host; Ganesha's log, pidfile and recovery directory are in the work directory.

Each server is a child of virtbench (PR_SET_PDEATHSIG from the main thread) in a session
of its own; its PID (`nbd_pid`) or process group (`nfs_pgid`) goes into the guest's
manifest, and the guardian kills it, checked against /proc (guardian.is_our_server), when
virtbench dies without stop().
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

from ....core.errors import EnvironmentUnusable
from ....machinery.host.executor import die_with_parent

NBD_SOCKET = "nbd.sock"


def nbd_argv(image: str, socket: str, cache: str, aio: str) -> list[str]:
    """qemu-nbd serving `image` (raw) on the unix socket `socket` until it is killed."""
    return ["qemu-nbd", "--format=raw", f"--socket={socket}", f"--cache={cache}",
            f"--aio={aio}", "--discard=unmap", "--persistent", "--shared=1", image]


def check_nbd() -> None:
    if not shutil.which("qemu-nbd"):
        raise EnvironmentUnusable("environment qemu: backing=nbd needs qemu-nbd; install it "
                                  "with: apt-get install qemu-utils")


GANESHA_CONF = "ganesha.conf"
NFS_PORT, MOUNT_PORT = 2049, 20048

GANESHA_CONFIG = """\
NFS_CORE_PARAM {{
  Protocols = 3;
  NFS_Port = {nfs_port};
  MNT_Port = {mount_port};
  Enable_NLM = false;
  Enable_RQUOTA = false;
}}
NFSV4 {{
  Graceless = true;
  RecoveryRoot = {recovery};
}}
EXPORT {{
  Export_Id = 1;
  Path = {export};
  Pseudo = /vbnfs;
  Access_Type = RW;
  Squash = No_Root_Squash;
  Protocols = 3;
  Transports = TCP;
  SecType = sys;
  FSAL {{ Name = VFS; }}
}}
"""

# run by `unshare --mount` inside the guest's namespace: a private /run, rpcbind, then
# Ganesha in the foreground in this process (one process group: the session's)
NFS_SCRIPT = """\
mount -t tmpfs vbnfs /run && mkdir -p /run/rpcbind /run/ganesha || exit 1
rpcbind -f &
i=0; while [ ! -S /run/rpcbind.sock ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
exec ganesha.nfsd -F -f "$1" -L "$2" -p "$3" -N NIV_EVENT
"""


def ganesha_config(export: str, recovery: str) -> str:
    """Ganesha's configuration: NFSv3 over TCP, the export read-write for root, no locking
    (NLM), quotas or NFSv4 grace period (nothing of those is in a scratch disk's path)."""
    for path in (export, recovery):
        if not path.startswith("/") or any(c in path for c in '"{};\n'):
            raise ValueError(f"not a plain absolute path: {path!r}")
    return GANESHA_CONFIG.format(nfs_port=NFS_PORT, mount_port=MOUNT_PORT, export=export,
                                 recovery=recovery)


def nfs_argv(ns_exec: list[str], workdir: Path) -> list[str]:
    """rpcbind and Ganesha in the namespace `ns_exec` wraps into, in a mount namespace of
    their own."""
    return [*ns_exec, "unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
            NFS_SCRIPT, "sh", str(workdir / GANESHA_CONF), str(workdir / "ganesha.log"),
            str(workdir / "ganesha.pid")]


def nfs_url(image: str) -> str:
    """The image's URL for QEMU's libnfs client (the export is the image's directory)."""
    return f"nfs://127.0.0.1{image}"


# Debian's QEMU keeps its nfs:// client in a module of qemu-block-extra (only a Recommends)
NFS_BLOCK_MODULE = Path("/usr/lib/x86_64-linux-gnu/qemu/block-nfs.so")


def check_nfs() -> None:
    missing = [t for t in ("ganesha.nfsd", "rpcbind", "unshare") if not shutil.which(t)]
    packages = ["nfs-ganesha", "nfs-ganesha-vfs", "rpcbind"]
    if not NFS_BLOCK_MODULE.exists():
        missing.append("QEMU's nfs block driver")
        packages.append("qemu-block-extra")
    if missing:
        raise EnvironmentUnusable(
            f"environment qemu: backing=nfs needs {', '.join(missing)}; install them with: "
            f"apt-get install {' '.join(packages)}")


def _spawn(argv: list[str], log: Path) -> subprocess.Popen:
    main = threading.current_thread() is threading.main_thread()
    with open(log, "wb") as err:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                                preexec_fn=die_with_parent if main else None,
                                start_new_session=True)


def _wait_for(path: Path, proc: subprocess.Popen, log: Path, what: str,
              timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            text = log.read_text(errors="replace").strip() if log.exists() else ""
            last = text.splitlines()[-1] if text else f"exit status {proc.returncode}"
            raise EnvironmentUnusable(f"environment qemu: {what} failed to start: {last}")
        if time.monotonic() > deadline:
            raise EnvironmentUnusable(f"environment qemu: {what} did not make {path} within "
                                      f"{timeout:.0f} s")
        time.sleep(0.05)


def start_nbd(workdir: Path, image: str, cache: str, aio: str,
              record=lambda pid: None) -> tuple[subprocess.Popen, str]:
    """qemu-nbd on `image`, and the socket it serves once it is listening; `record(pid)` is
    called as soon as it runs (the manifest)."""
    sock = workdir / NBD_SOCKET
    log = workdir / "qemu-nbd.log"
    proc = _spawn(nbd_argv(image, str(sock), cache, aio), log)
    try:
        record(proc.pid)
        _wait_for(sock, proc, log, "qemu-nbd")
    except BaseException:
        end(proc)
        raise
    return proc, str(sock)


def _listening(ns_exec: list[str]) -> bool:
    """Does the namespace's portmapper list the NFS and mount programs?"""
    try:
        out = subprocess.run([*ns_exec, "rpcinfo", "-p", "127.0.0.1"], capture_output=True,
                             text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return bool(re.search(r"^\s*100003\s+3\s+tcp", out, re.M)) and \
        bool(re.search(r"^\s*100005\s+3\s+tcp", out, re.M))


def start_nfs(workdir: Path, image: Path, ns_exec: list[str], record=lambda pgid: None,
              timeout: float = 60) -> tuple[subprocess.Popen, str]:
    """Ganesha exporting `image`'s directory in the namespace `ns_exec` wraps into; returns
    the server (its process group is the session leader's) and the image's URL;
    `record(pgid)` is called as soon as it runs (the manifest)."""
    (workdir / "recovery").mkdir(mode=0o700, exist_ok=True)
    (workdir / GANESHA_CONF).write_text(ganesha_config(str(image.parent),
                                                       str(workdir / "recovery")))
    log = workdir / "nfs-server.log"
    proc = _spawn(nfs_argv(ns_exec, workdir), log)
    try:
        record(proc.pid)
        deadline = time.monotonic() + timeout
        while not _listening(ns_exec):
            if proc.poll() is not None or time.monotonic() > deadline:
                text = ""
                for f in (workdir / "ganesha.log", log):
                    if f.exists():
                        text += f.read_text(errors="replace")
                crit = [ln for ln in text.splitlines() if "CRIT" in ln or "FATAL" in ln]
                last = (crit or text.splitlines() or ["no output"])[-1].strip()
                raise EnvironmentUnusable(f"environment qemu: the NFS server (nfs-ganesha) "
                                          f"did not start: {last}")
            time.sleep(0.2)
    except BaseException:
        end(proc, group=True)
        raise
    return proc, nfs_url(str(image))


def end(proc: subprocess.Popen | None, group: bool = False) -> None:
    """Stop a server (SIGTERM, then SIGKILL; `group`: its whole process group, rpcbind with
    Ganesha) and reap it."""
    if proc is None:
        return

    def signal_it(sig):
        try:
            if group:
                os.killpg(proc.pid, sig)
            elif proc.poll() is None:
                proc.send_signal(sig)
        except (ProcessLookupError, PermissionError):
            pass

    signal_it(signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    signal_it(signal.SIGKILL)     # what is left of the group (rpcbind), or a hung server
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def serve(values: dict, scratch: str, work, ns_exec: list[str], resources, unlist) -> dict:
    """backing=nbd|nfs: the scratch disk's server for a guest, its PID (nbd_pid) or process
    group (nfs_pgid) in the work directory's manifest as soon as it runs, registered in
    `resources` to end after QEMU (then `unlist(field)` drops it from the manifest); the
    -drive keys for build_argv ({} for a local backing)."""
    backing = values["backing"]
    if backing not in ("nbd", "nfs"):
        return {}
    field = "nbd_pid" if backing == "nbd" else "nfs_pgid"
    server = None

    def stop():
        end(server, group=backing == "nfs")
        unlist(field)

    try:
        if backing == "nbd":
            server, sock = start_nbd(work.path, scratch, values["cache"], values["aio"],
                                     lambda pid: work.set(**{field: pid}))
            return {"nbd_socket": sock}
        server, url = start_nfs(work.path, Path(scratch), ns_exec,
                                lambda pgid: work.set(**{field: pgid}))
        return {"nfs_url": url}
    finally:
        if server is not None:
            resources.add("the disk's server", stop)
