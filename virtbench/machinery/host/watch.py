"""The owner's side of guardian.py, shared by every kind that leaves things behind (QEMU
guests, libvirt domains, containers): the manifest the guardian reads, kept current
atomically, and the guardian process, started on it and dismissed with "done" at a normal
stop (on EOF without "done" it cleans up what the manifest lists)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from .net import netns
from . import workroot
from . import guardian


def new_manifest(workdir: Path, **fields) -> dict:
    """A manifest's first content: its owner ("<pid> <starttime>"), its work directory and the
    time it was made (a PID it names later must belong to a process started after it)."""
    me = os.getpid()
    return {"owner": f"{me} {netns.process_start_time(me)}", "workdir": str(workdir),
            "created": time.time(), **fields}


# What virtbench keeps on this host outside the guests' work directories goes into private
# directories of the work root with these prefixes: never into /tmp, where another user can
# choose names first and where nothing removes what a killed run left.
PRIVATE_PREFIXES = guardian.PRIVATE_PREFIXES


def private_dir(prefix: str) -> Path:
    """A new private directory (0700) in the checked work root, with a manifest naming this
    process as its owner: the next sweep removes it once this process is gone."""
    if prefix not in PRIVATE_PREFIXES:
        raise ValueError(f"{prefix!r} is not one of {PRIVATE_PREFIXES}")
    d = workroot.make_dir(prefix)
    write_manifest(d, new_manifest(d))
    return d


@contextmanager
def temporary_dir(prefix: str = "vbtmp-"):
    """A private directory for the length of a `with` block (removed at its end, and by the
    sweep if this process is killed inside it)."""
    d = private_dir(prefix)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def sweep_private() -> list[str]:
    """Remove the private directories (PRIVATE_PREFIXES) of dead owners."""
    return sweep(PRIVATE_PREFIXES)


def cleanup(manifest: dict, podman: list[str] | None = None) -> list[str]:
    """Remove what `manifest` lists (checked by the guardian's rules); warnings to stderr."""
    return guardian.cleanup(manifest, str(workroot.root()), podman, warn=_warn(manifest))


def _warn(manifest: dict):
    where = manifest.get("workdir", "?")
    return lambda line: print(f"virtbench: manifest in {where}: {line}", file=sys.stderr)


def sweep(prefix: str | tuple[str, ...], podman: list[str] | None = None) -> list[str]:
    """Clean up after dead owners: each `prefix`* directory of the work root whose manifest's
    owner is gone. Directories that are not ours, and manifests that are not regular files of
    ours, are skipped with a warning; a directory without a manifest is left for a minute (its
    owner may be setting it up). Returns the names removed."""
    removed = []
    prefixes = (prefix,) if isinstance(prefix, str) else tuple(prefix)
    for d, why in workroot.owned_entries(prefixes):
        if why:
            print(f"virtbench: {d}: skipped by the sweep: {why}", file=sys.stderr)
            continue
        manifest = _read_manifest(d / "manifest.json")
        if manifest is None:
            try:
                if time.time() - os.lstat(d).st_mtime < 60:
                    continue              # being set up right now by someone
            except OSError:
                continue
            manifest = {}
        if netns.owner_alive(str(manifest.get("owner", ""))):
            continue
        manifest["workdir"] = str(d)
        cleanup(manifest, podman)
        removed.append(d.name)
    return removed


def _read_manifest(path: Path) -> dict | None:
    """A manifest that is a regular file of ours (opened without following a symlink)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd) as f:
        st = os.fstat(f.fileno())
        if st.st_uid != os.geteuid() or not (st.st_mode & 0o170000 == 0o100000):
            return None
        try:
            data = json.load(f)
        except ValueError:
            return None
    return data if isinstance(data, dict) else None


def update_manifest(workdir: Path, **fields) -> None:
    """Add fields to workdir/manifest.json (a manifest this process wrote)."""
    data = json.loads((workdir / "manifest.json").read_text())
    write_manifest(workdir, {**data, **fields})


def write_manifest(workdir: Path, data: dict) -> None:
    """Replace workdir/manifest.json in one step (the guardian may read it at any moment)."""
    tmp = workdir / "manifest.json.part"
    tmp.write_text(json.dumps(data))
    os.replace(tmp, workdir / "manifest.json")


class Guardian:
    """A running guardian.py on `manifest`; only this process holds its pipe's write end."""

    def __init__(self, manifest: Path, podman: list[str] | None = None):
        r, w = os.pipe()
        extra = [json.dumps(podman)] if podman else []
        try:
            self.proc = subprocess.Popen(
                [sys.executable, guardian.__file__, str(manifest), *extra],
                stdin=r, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, close_fds=True)
        except BaseException:
            os.close(w)
            raise
        finally:
            os.close(r)
        os.set_inheritable(w, False)
        self._fd = w

    def dismiss(self) -> None:
        """The owner cleaned up itself: tell the guardian ("done"), let it end."""
        try:
            os.write(self._fd, b"done")
        except OSError:
            pass
        os.close(self._fd)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class WorkDir:
    """A work directory of the work root with its manifest, and its guardian once guarded:
    what a kind that leaves things on this host (a QEMU guest, a libvirt domain, a container)
    makes first. Everything it then makes outside the directory is listed in the manifest as
    it is made (set, add), so that remove() at a stop, the guardian after a crash, and the
    next run's sweep after a SIGKILL all remove the same things."""

    def __init__(self, prefix: str, podman: list[str] | None = None, **fields):
        self.path = workroot.make_dir(prefix)
        self.podman = podman                  # podman and its global flags, for containers
        self.data: dict = new_manifest(self.path, **fields)
        self.save()
        self._guardian: Guardian | None = None

    def save(self) -> None:
        write_manifest(self.path, self.data)

    def set(self, **fields) -> None:
        self.data.update(fields)
        self.save()

    def add(self, key: str, value) -> None:
        """Append `value` to the manifest's list `key`."""
        self.data.setdefault(key, []).append(value)
        self.save()

    def private_dir(self, prefix: str) -> Path:
        """A private directory of the work root (private_dir) that goes with this one."""
        d = private_dir(prefix)
        self.add("dirs", str(d))
        return d

    def guard(self) -> None:
        """Start the guardian on the manifest (it acts only if this process dies)."""
        self._guardian = Guardian(self.path / "manifest.json", self.podman)

    def remove(self) -> list[str]:
        """Remove everything listed and the directory, then dismiss the guardian; what
        could not be removed."""
        try:
            return cleanup(self.data, self.podman)
        finally:
            if self._guardian is not None:
                self._guardian.dismiss()
                self._guardian = None
