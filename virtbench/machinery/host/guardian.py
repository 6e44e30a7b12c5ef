#!/usr/bin/env python3
"""Clean up after a QEMU guest even when the virtbench process dies (SIGKILL, a crash).

Standard library only; run by path as a child in its own session, with a pipe on stdin
whose write end only the virtbench process holds:

    python3 guardian.py MANIFEST.json [PODMAN_ARGV_JSON]

When the pipe reaches EOF (the owner exited or was killed) without the owner having written
"done", it reads MANIFEST.json (kept current by the owner) and removes everything listed:
the QEMU process (killed) or the libvirt domain (destroyed), the scratch disk's server
(qemu-nbd, or Ganesha and its rpcbind: killed), the huge pages the guest added to the host's pool (given back), podman containers
and volumes (removed), loop devices, taps, the network namespace, and the work directory
(the scratch image and the root disk's snapshot overlay). `cleanup()` is also what
a normal stop() runs, so both paths remove the same things; the sweep runs it too on the
private directories of dead owners (a private sshd's, whose sshd it kills).

The manifest is data, never a command: the programs run (virsh, ip, losetup, podman) are
fixed here or given by the owner on the command line, and every field is checked against
what virtbench itself creates (`validate`) before anything is done with it.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time


# What a manifest may name: only what virtbench itself creates (netns.py, netpath.py,
# libvirt/defined.py, container/). Anything else is skipped with a warning, never acted on.
# Private directories beside the guests' and containers' work directories, each with a
# manifest of its own (guest/watch.py): bare metal's scratch, the TCG plugin's sockets, a
# private sshd's keys, ssh's control sockets, short-lived files.
PRIVATE_PREFIXES = ("vbscratch-", "vbexits-", "vbsshd-", "vbsshctl-", "vbtmp-")
WORKDIR_PREFIXES = ("vbqemu-", "vbctr-", *PRIVATE_PREFIXES)
NETNS = re.compile(r"vb-[0-9a-f]{6}(-[a-z])?")
TAP = re.compile(r"vbt[0-9a-f]{6}")
CONTAINER = re.compile(r"vbctr-[A-Za-z0-9_]{1,64}")
VOLUME = re.compile(r"vbctr-[A-Za-z0-9_]{1,64}-scratch")
LOOP = re.compile(r"/dev/loop[0-9]{1,6}")
DOMAIN = re.compile(r"virtbench-vb-[0-9a-f]{6}")
# a local libvirt URI, no transport that runs a program (qemu+ext, ?command=...)
LIBVIRT_URI = re.compile(r"(qemu|test):///(system|session|default)(\?socket=/[A-Za-z0-9_./-]+)?")
OWNERS_DIR = "/run/virtbench/netns"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def _boot_time() -> float:
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("btime "):
                return float(line.split()[1])
    return 0.0


def _proc_start_epoch(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return _boot_time() + int(fields[19]) / CLK_TCK


def _started_after(pid: int, created: float | None) -> bool:
    started = _proc_start_epoch(pid)
    return started is not None and (created is None or started >= created - 2.0)


def _exe_and_argv(pid: int) -> tuple[str, list[bytes]] | None:
    try:
        exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return exe, f.read().rstrip(b"\0").split(b"\0")
    except OSError:
        return None


def is_our_qemu(pid: int, workdir: str, created: float | None) -> bool:
    """Is `pid` the QEMU started for `workdir`: a qemu-system binary, the work directory in
    its command line (its pidfile and sockets live there), started after the manifest?"""
    found = _exe_and_argv(pid)
    if found is None or not found[0].startswith("qemu-system"):
        return False
    if not any(a.startswith(workdir.encode() + b"/") for a in found[1]):
        return False
    return _started_after(pid, created)


def is_our_sshd(pid: int, workdir: str, created: float | None) -> bool:
    """Is `pid` the private sshd started on `workdir`'s config: the sshd binary, `-f
    WORKDIR/sshd_config` in its command line (as given, or as sshd retitles itself: one
    string), started after the manifest?"""
    found = _exe_and_argv(pid)
    if found is None or found[0] != "sshd":
        return False
    if f"-f {workdir}/sshd_config".encode() not in b" ".join(found[1]):
        return False
    return _started_after(pid, created)


def is_our_server(pid: int, workdir: str, created: float | None) -> bool:
    """Is `pid` a disk server started for `workdir` (backing=nbd): the qemu-nbd binary, a
    path in the work directory in its command line (`--socket=WORKDIR/nbd.sock`), started
    after the manifest?"""
    found = _exe_and_argv(pid)
    if found is None or found[0] != "qemu-nbd":
        return False
    if not any(workdir.encode() + b"/" in a for a in found[1]):
        return False
    return _started_after(pid, created)


NFS_SERVERS = ("ganesha.nfsd", "rpcbind")


def kill_nfs_group(pgid: int, workdir: str, created: float | None) -> None:
    """SIGKILL the NFS server of `workdir` (backing=nfs): the processes of process group
    `pgid` that are Ganesha or its rpcbind, started after the manifest; and only when the
    group's leader, if it still lives, is the Ganesha started on WORKDIR/ganesha.conf."""
    leader = _exe_and_argv(pgid)
    if leader is not None and not (
            leader[0] == "ganesha.nfsd" and f"{workdir}/ganesha.conf".encode() in leader[1]):
        return
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        try:
            if os.getpgid(pid) != pgid:
                continue
        except OSError:
            continue
        found = _exe_and_argv(pid)
        if found is None or found[0] not in NFS_SERVERS or not _started_after(pid, created):
            continue
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


HUGEPAGES_POOL = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"


def release_hugepages(added: int, pool: str = HUGEPAGES_POOL) -> None:
    """Lower the 2 MiB huge page pool by the pages a guest added (hugepages=on)."""
    try:
        with open(pool) as f:
            now = int(f.read().split()[0])
        with open(pool, "w") as f:
            f.write(str(max(0, now - added)))
    except (OSError, ValueError, IndexError):
        pass


def kill_qemu(pid: int, workdir: str, created: float | None = None,
              wait_s: float = 10.0) -> None:
    kill_ours(pid, workdir, created, is_our_qemu, wait_s)


def kill_ours(pid: int, workdir: str, created: float | None, ours, wait_s: float = 10.0) -> None:
    """SIGKILL `pid` if `ours(pid, workdir, created)` says it is ours, and wait until it is
    gone (reaped if it is our child, a zombie or out of /proc if not)."""
    if not pid or not ours(pid, workdir, created):
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            # our own child: reap it; anyone else's: wait for /proc to drop it
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                return
        except ChildProcessError:
            if not os.path.exists(f"/proc/{pid}"):
                return
            try:
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        return
            except OSError:
                return
        time.sleep(0.02)


def _private_dir(path: str, root: str) -> str | None:
    """`path` if it is a directory directly in `root`, with one of virtbench's prefixes, not a
    symlink, owned by us and writable by no one else; else None."""
    p = os.path.normpath(str(path))
    if os.path.dirname(p) != os.path.normpath(root) or \
            not os.path.basename(p).startswith(WORKDIR_PREFIXES):
        return None
    try:
        st = os.lstat(p)
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() \
            or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    return p


def _loop_backed_inside(loop: str, workdir: str) -> bool:
    """Is `loop` a loop device whose backing file (per losetup) lies in `workdir`?"""
    try:
        out = subprocess.run(["losetup", "--noheadings", "--output", "BACK-FILE", loop],
                             capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return False
    back = out.removesuffix(" (deleted)")
    return bool(back) and os.path.normpath(back).startswith(workdir.rstrip("/") + "/")


def _listed(value) -> list:
    """A field that should be a list, as one (a lone value is a list of one; none: [])."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _read_pid(path: str) -> int | None:
    """The number in a pidfile: a regular file, not a symlink, read without blocking."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return int(os.read(fd, 32).decode().strip() or 0)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)


def _is_pid(value) -> bool:
    """A process id: an int (not a bool) below PID_MAX_LIMIT."""
    return isinstance(value, int) and not isinstance(value, bool) and 1 < value < 2**22


class _Review:
    """A manifest's fields as they are checked: what may be acted on (ok), and a warning
    for each value that may not."""

    def __init__(self, manifest: dict, root: str):
        self.manifest, self.root = manifest, root
        self.ok: dict = {}
        self.warnings: list[str] = []

    def skip(self, field: str, value, why: str) -> None:
        self.warnings.append(f"{field} {str(value)[:80]!r} skipped: {why}")

    def one(self, field: str, value, good: bool, why: str) -> None:
        """A single value (None: absent, nothing to say), kept if `good`."""
        if value is None:
            return
        if good:
            self.ok[field] = value
        else:
            self.skip(field, value, why)

    def each(self, field: str, accept, why: str) -> None:
        """Each value of a list field: accept(value) -> what to keep, or None to skip it."""
        for value in _listed(self.manifest.get(field)):
            kept = accept(value)
            if kept is not None:
                self.ok.setdefault(field, []).append(kept)
            else:
                self.skip(field, value, why)


def validate(manifest: dict, root: str) -> tuple[dict, list[str]]:
    """What of `manifest` virtbench may act on, and a warning for each field it may not.
    Every name must match virtbench's own patterns, every path lie in the work root; a field
    of the wrong type is skipped like a wrong value, and nothing here raises."""
    if not isinstance(manifest, dict):
        return {}, [f"manifest skipped: not a JSON object ({type(manifest).__name__})"]
    review = _Review(manifest, root)
    given = manifest.get("workdir")
    workdir = _private_dir(given, root) if isinstance(given, str) and given else None
    if workdir is None:
        review.skip("workdir", given, f"not a private directory of virtbench's in {root}")
        return review.ok, review.warnings     # nothing is trusted without its work directory
    review.ok["workdir"] = workdir
    _review_created(review)
    _review_processes(review, workdir)
    _review_held(review)
    _review_names(review)
    _review_paths(review, workdir)
    return review.ok, review.warnings


def _review_created(review: _Review) -> None:
    created = review.manifest.get("created")
    review.ok["created"] = None
    if isinstance(created, (int, float)) and not isinstance(created, bool) \
            and created == created:
        review.ok["created"] = float(created)
    elif created is not None:
        review.skip("created", created, "not a time")


def _review_processes(review: _Review, workdir: str) -> None:
    """QEMU's (from its pidfile when the manifest has no pid), sshd's, the scratch disk's
    servers'."""
    m = review.manifest
    pid, pidfile = m.get("qemu_pid"), m.get("pidfile")
    if pid is None and pidfile is not None:
        if isinstance(pidfile, str) and os.path.dirname(os.path.normpath(pidfile)) == workdir:
            pid = _read_pid(pidfile)
        else:
            review.skip("pidfile", pidfile, "not a file in the work directory")
    for field, value in (("qemu_pid", pid), ("sshd_pid", m.get("sshd_pid")),
                         ("nbd_pid", m.get("nbd_pid")), ("nfs_pgid", m.get("nfs_pgid"))):
        review.one(field, value, _is_pid(value), "not a process id")


def _review_held(review: _Review) -> None:
    """What the guest holds on the host besides those: the huge pages it added to the pool,
    second QEMUs of it (a restore, a migration's destination), a transient libvirt domain."""
    added = review.manifest.get("hugepages_added")
    review.one("hugepages_added", added,      # at most 4 TiB of 2 MiB pages
               isinstance(added, int) and not isinstance(added, bool) and 0 <= added < 2**21,
               "not a count of huge pages")
    review.each("qemu_pids", lambda v: v if _is_pid(v) else None, "not a process id")
    domain = review.manifest.get("libvirt_domain")
    good = isinstance(domain, dict) and isinstance(domain.get("name"), str) \
        and DOMAIN.fullmatch(domain["name"]) is not None \
        and isinstance(domain.get("uri"), str) \
        and LIBVIRT_URI.fullmatch(domain["uri"]) is not None
    kept = {"uri": domain["uri"], "name": domain["name"]} if good else domain
    review.one("libvirt_domain", kept, good,
               "not a transient domain of virtbench's on a local URI")


def _review_names(review: _Review) -> None:
    """Containers, volumes, taps and namespaces: names virtbench gives."""
    for field, pattern in (("containers", CONTAINER), ("volumes", VOLUME), ("host_taps", TAP),
                           ("extra_netns", NETNS)):
        review.each(field, lambda v, pattern=pattern: v if isinstance(v, str)
                    and pattern.fullmatch(v) else None, "not a name virtbench gives")
    ns = review.manifest.get("netns")
    review.one("netns", ns, isinstance(ns, str) and NETNS.fullmatch(ns) is not None,
               "not a name virtbench gives")


def _review_paths(review: _Review, workdir: str) -> None:
    """Loop devices backed by a file in the work directory; private directories of ours."""
    review.each("loops", lambda v: v if isinstance(v, str) and LOOP.fullmatch(v)
                and _loop_backed_inside(v, workdir) else None,
                "not a loop device backed by a file in the work directory")
    review.each("dirs", lambda v: _private_dir(v, review.root) if isinstance(v, str) else None,
                f"not a private directory of virtbench's in {review.root}")


def remove_container(podman: list[str], name: str) -> list[str]:
    """`podman rm -f` a container, then kill what rm leaves of one whose runtime never
    finished creating it (a hung `runsc create`: conmon, runsc, its gofer and sandbox, whose
    command lines name the container's id). Returns what could not be removed."""
    try:
        cid = subprocess.run(podman + ["inspect", "--format", "{{.Id}}", name],
                             capture_output=True, text=True, timeout=60).stdout.strip()
        subprocess.run(podman + ["rm", "-f", "-t", "0", "--ignore", name],
                       capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [f"podman rm {name}: {exc}"]
    if len(cid) == 64:
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if cid.encode() not in f.read():
                        continue
                os.kill(int(entry), signal.SIGKILL)
            except (OSError, ProcessLookupError):
                pass
    return []


def cleanup(manifest: dict, root: str, podman: list[str] | None = None,
            warn=None) -> list[str]:
    """Remove everything the manifest lists that `validate` lets through; return what could not
    be removed. The programs run come from here and from `podman` (the owner's argv for
    podman with its global flags), never from the manifest; `warn` gets each skipped field."""
    m, warnings = validate(manifest, root)
    for line in warnings:
        (warn or (lambda text: None))(line)
    problems = []
    if "workdir" not in m:
        return problems
    domain = m.get("libvirt_domain")
    if domain:   # a transient domain libvirtd runs: destroying it removes it
        try:
            subprocess.run(["virsh", "-q", "-c", domain["uri"], "destroy", domain["name"]],
                           capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            problems.append(f"virsh destroy {domain['name']}: {exc}")
    for pid in [m.get("qemu_pid"), *(m.get("qemu_pids") or [])]:
        if pid:
            kill_qemu(pid, m["workdir"], m["created"])
    if m.get("nbd_pid"):     # the scratch disk's server, once its client is gone
        kill_ours(m["nbd_pid"], m["workdir"], m["created"], is_our_server)
    if m.get("nfs_pgid"):
        kill_nfs_group(m["nfs_pgid"], m["workdir"], m["created"])
    if m.get("hugepages_added"):   # after QEMU: its pages are free again
        release_hugepages(m["hugepages_added"])
    if m.get("sshd_pid"):    # a private sshd (its keys and config in the work directory)
        kill_ours(m["sshd_pid"], m["workdir"], m["created"], is_our_sshd)
    if podman:
        for name in m.get("containers") or []:   # a container (and its runsc sandbox)
            problems += remove_container(podman, name)
        for name in m.get("volumes") or []:
            try:
                subprocess.run(podman + ["volume", "rm", "-f", name], capture_output=True,
                               text=True, timeout=120)
            except (OSError, subprocess.TimeoutExpired) as exc:
                problems.append(f"podman volume rm {name}: {exc}")
    for tap in m.get("host_taps") or []:   # a tap not yet moved into the namespace
        subprocess.run(["ip", "link", "delete", tap], capture_output=True, text=True)
    for loop in m.get("loops") or []:
        proc = subprocess.run(["losetup", "-d", loop], capture_output=True, text=True)
        if proc.returncode != 0 and "No such device" not in proc.stderr:
            problems.append(f"losetup -d {loop}: {proc.stderr.strip()}")
    for ns in list(m.get("extra_netns") or []) + [m.get("netns")]:
        if not ns:
            continue
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        if any(line.split()[0] == ns for line in listed.splitlines() if line.strip()):
            proc = subprocess.run(["ip", "netns", "delete", ns], capture_output=True, text=True)
            if proc.returncode != 0:
                problems.append(f"ip netns delete {ns}: {proc.stderr.strip()}")
        try:
            os.unlink(os.path.join(OWNERS_DIR, ns))
        except OSError:
            pass
    for d in m.get("dirs") or []:
        shutil.rmtree(d, ignore_errors=True)
    shutil.rmtree(m["workdir"], ignore_errors=True)
    return problems


def main(argv: list[str]) -> int:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_IGN)
    path = argv[1]
    podman = json.loads(argv[2]) if len(argv) > 2 else None   # from the owner, not the file
    data = b""
    while True:
        chunk = os.read(0, 4096)
        if not chunk:
            break
        data += chunk
        if b"done" in data:
            return 0
    os.environ["PATH"] = "/usr/sbin:/usr/bin:/sbin:/bin:" + os.environ.get("PATH", "")
    try:
        with open(path) as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        return 0
    root = os.path.dirname(os.path.dirname(os.path.abspath(path)))
    cleanup(manifest, root, podman)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
