#!/usr/bin/env python3
"""Clean up after a QEMU guest even when the virtbench process dies (SIGKILL, a crash).

Standard library only; run by path as a child in its own session, with a pipe on stdin
whose write end only the virtbench process holds:

    python3 guardian.py MANIFEST.json

When the pipe reaches EOF (the owner exited or was killed) without the owner having written
"done", it reads MANIFEST.json (kept current by the owner) and removes everything listed:
the QEMU process (killed) or the libvirt domain (destroyed), podman containers and
volumes (removed), loop devices, taps, the network namespace, and the work directory
(the scratch image and the root disk's snapshot overlay). `cleanup()` is also what
a normal stop() runs, so both paths remove the same things.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time


def _is_qemu(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"qemu" in f.read()
    except OSError:
        return False


def kill_qemu(pid: int, wait_s: float = 10.0) -> None:
    if not pid or not _is_qemu(pid):
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


def _pid_from(manifest: dict) -> int:
    pid = manifest.get("qemu_pid") or 0
    pidfile = manifest.get("pidfile")
    if not pid and pidfile:
        try:
            with open(pidfile) as f:
                pid = int(f.read().strip() or 0)
        except (OSError, ValueError):
            pid = 0
    return pid


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


def cleanup(manifest: dict) -> list[str]:
    """Remove everything the manifest lists; return what could not be removed."""
    problems = []
    domain = manifest.get("libvirt_domain")
    if domain:   # a transient domain libvirtd runs: destroying it removes it
        try:
            subprocess.run(["virsh", "-q", "-c", domain["uri"], "destroy", domain["name"]],
                           capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            problems.append(f"virsh destroy {domain['name']}: {exc}")
    kill_qemu(_pid_from(manifest))
    podman = manifest.get("podman") or ["podman"]   # with its global flags
    for name in manifest.get("containers") or []:   # a container (and its runsc sandbox)
        problems += remove_container(podman, name)
    for name in manifest.get("volumes") or []:
        try:
            subprocess.run(podman + ["volume", "rm", "-f", name], capture_output=True,
                           text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            problems.append(f"podman volume rm {name}: {exc}")
    for tap in manifest.get("host_taps") or []:   # a tap not yet moved into the namespace
        subprocess.run(["ip", "link", "delete", tap], capture_output=True, text=True)
    for loop in manifest.get("loops") or []:
        proc = subprocess.run(["losetup", "-d", loop], capture_output=True, text=True)
        if proc.returncode != 0 and "No such device" not in proc.stderr:
            problems.append(f"losetup -d {loop}: {proc.stderr.strip()}")
    for ns in list(manifest.get("extra_netns") or []) + [manifest.get("netns")]:
        if not ns:
            continue
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        if any(line.split()[0] == ns for line in listed.splitlines() if line.strip()):
            proc = subprocess.run(["ip", "netns", "delete", ns], capture_output=True, text=True)
            if proc.returncode != 0:
                problems.append(f"ip netns delete {ns}: {proc.stderr.strip()}")
        try:
            os.unlink(os.path.join(manifest.get("owners_dir") or "/run/virtbench/netns", ns))
        except OSError:
            pass
    workdir = manifest.get("workdir")
    if workdir and os.path.basename(workdir.rstrip("/")).startswith(("vbqemu-", "vbctr-")):
        shutil.rmtree(workdir, ignore_errors=True)
    return problems


def main(argv: list[str]) -> int:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_IGN)
    path = argv[1]
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
    cleanup(manifest)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
