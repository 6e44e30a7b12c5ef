"""Our benchmark kernels (himeno, stream, pi, cyclepi, primitives): find their C sources and build them once.

They are built static and for generic x86-64 so one binary runs on the host and in any guest.
Builds are cached under the user's cache directory by a hash of the sources, so editing a
kernel rebuilds it and nothing else ever does.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import platformdirs

from ..host import workroot
from ...core.errors import VirtbenchError

KERNELS = ("himeno", "stream", "pi", "cyclepi", "primitives")
PROGRAMS = KERNELS + ("himeno-l",)      # every binary the Makefile builds


def source_dir() -> Path:
    src = Path(__file__).resolve().parent / "src"
    if (src / "Makefile").exists():
        return src
    raise VirtbenchError("kernel sources not found; reinstall virtbench (pip install -e .)")


CACHE_ENV = "VIRTBENCH_CACHE"
_checked: set[Path] = set()


def cache_dir() -> Path:
    """The cache ($VIRTBENCH_CACHE, default the user's cache directory). What is built there
    runs as root (these kernels, the guest image, the TCG plugin), so it is trusted only once
    checked, by the work root's rules: a real directory of ours that no one else can write, in
    a parent others cannot rename it out of. Made (0700) if missing, then checked (once per
    process: once it is ours in such a parent, no one else can replace it)."""
    path = Path(os.environ.get(CACHE_ENV) or platformdirs.user_cache_dir("virtbench"))
    if path not in _checked:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            workroot.check_parent(path, "cache directory", CACHE_ENV)
            path.mkdir(mode=0o700, exist_ok=True)
        except OSError as exc:
            raise VirtbenchError(f"cache directory {path} cannot be created ({exc.strerror}); "
                                 f"set ${CACHE_ENV} to a directory you can write") from None
        workroot.check_dir(path, "cache directory", CACHE_ENV)
        _checked.add(path)
    return path


def sources_hash(src: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(src.iterdir()):
        if path.is_file() and (path.suffix in {".c", ".h"} or path.name == "Makefile"):
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def identity(src: Path | None = None) -> str:
    """What a build of the kernels is: their sources' hash (the cache's directory name) and
    the compiler that builds them, "sources 1a2b3c4d5e6f7a8b, cc (Debian 12.2.0-14) 12.2.0"
    (no compiler here: the sources alone). Runs are told apart by it (the report's
    `run.kernels_build`)."""
    out = f"sources {sources_hash(src or source_dir())}"
    if shutil.which("cc"):
        proc = subprocess.run(["cc", "--version"], capture_output=True, text=True)
        line = (proc.stdout.strip().splitlines() or [""])[0]
        if proc.returncode == 0 and line:
            out += f", {line}"
    return out


def check_build_tools() -> None:
    """One line naming what is missing and how to get it."""
    if not shutil.which("make") or not shutil.which("cc"):
        raise VirtbenchError("a C compiler and make are needed to build the kernels; "
                             "install them with: apt-get install build-essential")
    for lib, pkg in (("gmp.h", "libgmp-dev"), ("mpfr.h", "libmpfr-dev")):
        if not any(Path(d, lib).exists() for d in ("/usr/include", "/usr/local/include",
                                                     "/usr/include/x86_64-linux-gnu")):
            raise VirtbenchError(f"{lib} not found (needed by the pi kernel); "
                                 f"install it with: apt-get install {pkg}")


def build(force: bool = False) -> Path:
    """Build the kernels if needed and return the directory holding the binaries. Several
    processes building at once (two runs starting together) take turns on a lock: the
    first builds, the others find its binaries."""
    src = source_dir()
    out = cache_dir() / "kernels" / sources_hash(src)
    if not force and all((out / k).exists() for k in KERNELS):
        return out
    check_build_tools()
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)               # released when the file closes
        if not force and all((out / k).exists() for k in KERNELS):
            return out                                 # another process built them meanwhile
        tmp = Path(tempfile.mkdtemp(prefix=out.name + ".tmp-", dir=out.parent))
        try:
            proc = subprocess.run(["make", "-C", str(src), f"OUT={tmp}"], capture_output=True,
                                  text=True)
            if proc.returncode != 0:
                last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
                raise VirtbenchError(f"building the kernels failed: {last}; "
                                     f"run `make -C {src}` to see the whole error")
            shutil.rmtree(out, ignore_errors=True)
            tmp.rename(out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return out
