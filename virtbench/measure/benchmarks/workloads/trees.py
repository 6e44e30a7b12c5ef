"""The pinned source trees of the `compile` benchmark, and how their sha256 is taken.

quick: Lua 5.4.6, shipped under trees/lua-5.4.6 (MIT; its SOURCE file says where it came
from); pinned by the sha256 of the whole directory, taken in the environment by a shell
pipeline that `tree_sha256` computes the same way here.
kernel: Debian 12's linux-source-6.1 package (/usr/src/linux-source-6.1.tar.xz), pinned by the
tarball's sha256 for the Debian version named below; built with a configuration target
(`make defconfig` by default).
"""
from __future__ import annotations

import hashlib
import io
import os
import shlex
import tarfile
from dataclasses import dataclass
from pathlib import Path

from ....core.errors import VirtbenchError

TREES_DIR = Path(__file__).resolve().parent / "trees"


@dataclass(frozen=True)
class SourceTree:
    """One pinned tree: where it comes from, its pin, what `make` builds and leaves."""

    size: str                  # the `size` parameter's value that picks it
    name: str                  # e.g. lua-5.4.6; names the directories in the scratch dir
    top: str                   # the tree's top directory (inside the tarball)
    sha256: str                # of the tree (shipped) or of the tarball (Debian's)
    artifact: str              # what a finished build leaves, relative to the top
    tarball: str = ""          # the Debian package's tarball in the environment ("": shipped)
    package: str = ""          # the Debian package that brings the tarball
    version: str = ""          # the package's Debian version the pin is for
    # (probe, Debian package): a program on PATH, or a file (absolute path) the build needs
    needs: tuple[tuple[str, str], ...] = ()

    @property
    def shipped(self) -> Path:
        return TREES_DIR / self.name

    @property
    def pinned(self) -> str:
        """The tree and its pin, for messages and the trial's detail."""
        origin = f"{self.package} {self.version}" if self.package else "shipped with virtbench"
        return f"{self.name} ({origin}, sha256 {self.sha256[:12]}...)"


LUA = SourceTree(
    size="quick", name="lua-5.4.6", top="lua-5.4.6", artifact="lua",
    sha256="691d3e080d390ff4a0c6b7cc06a66c9ae29c49136f4714fe1e58a29497adaf1b",
    needs=(("make", "make"), ("gcc", "gcc"), ("ar", "binutils")))

KERNEL = SourceTree(
    size="kernel", name="linux-source-6.1", top="linux-source-6.1", artifact="vmlinux",
    sha256="cacdc3830989309d042083be3307969e55600ed7f908cf00df544c5ff50759a1",
    tarball="/usr/src/linux-source-6.1.tar.xz", package="linux-source-6.1", version="6.1.192-3",
    needs=(("make", "make"), ("gcc", "gcc"), ("ar", "binutils"), ("xz", "xz-utils"),
           ("flex", "flex"), ("bison", "bison"), ("bc", "bc"), ("perl", "perl"),
           ("/usr/include/gelf.h", "libelf-dev"), ("/usr/include/openssl/evp.h", "libssl-dev"),
           ("/usr/src/linux-source-6.1.tar.xz", "linux-source-6.1")))

TREES = {t.size: t for t in (LUA, KERNEL)}


# -- the sha256 of a tree ---------------------------------------------------------------
def tree_sha256(files: dict[str, bytes]) -> str:
    """Pure: the sha256 of a tree given as {relative path: content}, as TREE_HASH prints it:
    sha256sum's lines ("HASH  ./path") for every file in byte order of the path, hashed."""
    listing = "".join(f"{hashlib.sha256(files[rel]).hexdigest()}  ./{rel}\n"
                      for rel in sorted(files, key=lambda r: ("./" + r).encode()))
    return hashlib.sha256(listing.encode()).hexdigest()


# in the environment: sh -c TREE_HASH sh DIR -> "HASH  -"
TREE_HASH = ('cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum '
             '| sha256sum')


def shipped_files(tree: SourceTree) -> dict[str, bytes]:
    """The shipped tree's files ({relative path: content}); VirtbenchError when it is not
    there (a broken installation)."""
    root = tree.shipped
    if not root.is_dir():
        raise VirtbenchError(f"the {tree.name} tree is not in {root}; reinstall virtbench "
                             "(pip install -e .)")
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def shipped_tar(tree: SourceTree) -> bytes:
    """The shipped tree as one uncompressed tar (top directory `tree.top`), to put in the
    environment; refused here already when its sha256 is not the pin."""
    files = shipped_files(tree)
    found = tree_sha256(files)
    if found != tree.sha256:
        raise VirtbenchError(mismatch(tree, found, str(tree.shipped)))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel, data in files.items():
            info = tarfile.TarInfo(f"{tree.top}/{rel}")
            info.size, info.mode = len(data), 0o644
            info.mtime = int(os.stat(tree.shipped / rel).st_mtime)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def mismatch(tree: SourceTree, found: str, where: str) -> str:
    """The one line for a tree or tarball whose sha256 is not the pin."""
    fix = (f"install {tree.package}={tree.version}, or pin the new version in "
           "virtbench/measure/benchmarks/workloads/trees.py" if tree.package else
           "restore it from virtbench's repository (git checkout -- that directory)")
    return (f"benchmark compile: {where} has sha256 {found}, virtbench pins {tree.sha256} "
            f"({tree.pinned}); {fix}")


def sha256_of_output(stdout: str) -> str:
    """Pure: the hash sha256sum printed first ("HASH  NAME"), or "" when there is none."""
    first = stdout.split()[:1]
    word = first[0].lower() if first else ""
    return word if len(word) == 64 and all(c in "0123456789abcdef" for c in word) else ""


# -- what the build needs in the environment ----------------------------------------------
def needs_script(tree: SourceTree) -> str:
    """A shell script that prints the Debian package of every probe of `tree.needs` that
    fails (a program not on PATH, a file not there), one a line; nothing when all are."""
    lines = []
    for probe, package in tree.needs:
        test = (f"test -e {shlex.quote(probe)}" if probe.startswith("/")
                else f"command -v {shlex.quote(probe)} >/dev/null 2>&1")
        lines.append(f"{test} || echo {shlex.quote(package)}")
    return "\n".join(lines)


def missing_line(tree: SourceTree, stdout: str) -> str | None:
    """Pure: the one line naming the packages the needs script found missing, or None."""
    packages = sorted(set(stdout.split()))
    if not packages:
        return None
    return (f"benchmark compile: building {tree.name} needs {', '.join(packages)} in the "
            f"environment; install with: apt-get install {' '.join(packages)}")
