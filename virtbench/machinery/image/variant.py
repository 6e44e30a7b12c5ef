"""Image variants: the guest image's base tree plus the Debian packages a study's benchmarks
need (`Benchmark.packages`: redis-server, postgresql-15...), cached by the package set.

A variant is built on first use from the cached base tree (guest_image.py, level 1): a copy
of it (`cp -a --reflink=auto`), then `apt-get update` and `apt-get install
--no-install-recommends PACKAGES` in that copy (chroot) from the base's own apt sources
(the base recipe's suite and mirror, which mmdebstrap wrote into the tree), then the base's
trim. That takes the copy plus the packages' own download and install (about 35 s for
redis-tools and bzip2 here), where a fresh mmdebstrap with the extra packages takes the
whole bootstrap again (144 s and more). The install runs in a private mount namespace
(`unshare --mount`) with /proc, /sys and /dev mounted for the packages' scripts, which
vanish with it; a policy-rc.d keeps their services from starting in the tree.

Cached in `<images>/variant-<key>/` beside the base (`rootfs/`, `recipe.json`, `installed.txt`:
each added package's installed version, `done`), keyed by the base recipe and the sorted
package set: the same set (in any order) is the same variant, reused; another set is another
variant. A package the base already has adds nothing (ncbi-blast+ is in every guest image);
no packages beyond the base's: no variant, the base tree itself. Built in a temporary directory and
renamed into place (cache.building), in the cache directory virtbench created and checked
(kernels/build.py cache_dir: ours, 0700, no symlink), as the base is.
"""
from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path
from typing import Callable, Iterable

from ...core.errors import VirtbenchError
from . import cache

# Debian policy 5.6.1: lower case letters, digits, + - . ; at least two characters, starting
# with a letter or a digit. Nothing else reaches apt-get's command line.
PACKAGE_NAME = re.compile(r"[a-z0-9][a-z0-9+.-]+")
# Hashed once, at import (as guest_image's builder): a change to this code rebuilds every
# variant, and the code that builds is the code that was hashed.
BUILDER = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
POLICY_RC = "usr/sbin/policy-rc.d"

# Run as `sh -c INSTALL sh ROOT PACKAGE...` inside `unshare --mount --propagation private`:
# the mounts are the namespace's, gone when it ends whatever happened.
INSTALL = """set -e
root=$1; shift
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --rbind /dev "$root/dev"
chroot "$root" apt-get -q update
chroot "$root" apt-get -q -y --no-install-recommends install "$@"
"""

Say = Callable[[str], None]


def package_set(packages: Iterable[str]) -> tuple[str, ...]:
    """The packages sorted, each once, each a Debian package name (else one line naming it)."""
    names = list(packages)
    for name in names:
        if not isinstance(name, str) or not PACKAGE_NAME.fullmatch(name):
            raise VirtbenchError(f"{name!r} is not a Debian package name (lower-case letters, "
                                 "digits, + - .); fix the benchmark's `packages`")
    return tuple(sorted(set(names)))


def extra(base: dict, packages: Iterable[str]) -> tuple[str, ...]:
    """The packages (checked, sorted, once each) that the base recipe does not have already
    (its names without a `/SUITE` pin)."""
    has = {name.split("/", 1)[0] for name in base["packages"]}
    return tuple(p for p in package_set(packages) if p not in has)


def recipe(base: dict, packages: Iterable[str]) -> dict:
    """A variant's recipe: its base recipe's key, the packages it adds, how they are added."""
    return {"base": cache.digest(base), "packages": list(extra(base, packages)),
            "suite": base["suite"], "mirror": base["mirror"],
            "tool": "apt-get --no-install-recommends", "trim": list(base["trim"]),
            "builder": BUILDER}


def key(base: dict, packages: Iterable[str]) -> str:
    """The variant's cache key: the same base and package set (in any order), the same key."""
    return cache.digest(recipe(base, packages))


def directory(where: Path, base: dict, packages: Iterable[str]) -> Path:
    return where / f"variant-{key(base, packages)}"


def cached_tree(where: Path, base: dict, packages: Iterable[str]) -> Path | None:
    """The variant's tree if it is built, else None (nothing built)."""
    out = directory(where, base, packages)
    return out / "rootfs" if (out / "done").exists() else None


def announcement(packages: tuple[str, ...]) -> str:
    """What the build line says before it ends: `building a variant with 2 more packages
    (redis-server, redis-tools) ...`."""
    n = len(packages)
    return (f"building a variant with {n} more package{'s' if n != 1 else ''} "
            f"({', '.join(packages)}) ...")


def tree(base_root: Path, base: dict, packages: Iterable[str], where: Path,
         say: Say | None = None, force: bool = False) -> Path:
    """The tree of `base_root` (the tree of recipe `base`) with `packages` added, cached in
    `where`; the base tree itself when there are none. Building says ONE line, begun with
    announcement() and ended with the time it took (a Progress of open_line's kind shows
    both halves on one line). The caller holds the base's build lock."""
    say = say or (lambda msg: None)
    wanted = extra(base, packages)
    if not wanted:
        return base_root
    out = directory(where, base, wanted)
    if not force and (out / "done").exists():
        return out / "rootfs"
    t0 = time.monotonic()
    say(announcement(wanted))
    try:
        with cache.building(out) as tmp:
            installed = _install(base_root, tmp / "rootfs", wanted, base["trim"])
            (tmp / "recipe.json").write_text(json.dumps(recipe(base, wanted), indent=2) + "\n")
            (tmp / "installed.txt").write_text("".join(f"{line}\n" for line in installed))
            (tmp / "done").write_text("ok\n")
    except BaseException:
        say(f"failed after {time.monotonic() - t0:.0f} s")
        raise
    say(f"done in {time.monotonic() - t0:.0f} s")
    return out / "rootfs"


def installed(tree_root: Path) -> list[str]:
    """`PACKAGE VERSION` of each package a variant added (its installed.txt); [] for a base."""
    listing = tree_root.parent / "installed.txt"
    return listing.read_text().splitlines() if listing.is_file() else []


def _install(base_root: Path, root: Path, packages: tuple[str, ...], trim) -> list[str]:
    """Copy the base tree to `root` and install `packages` there; their versions."""
    cache.run(["cp", "-a", "--reflink=auto", str(base_root), str(root)],
              what="copying the base tree")
    resolv = _swap_resolv_conf(root)
    policy = root / POLICY_RC
    policy.unlink(missing_ok=True)
    policy.write_text("#!/bin/sh\nexit 101\n")      # no service starts in the tree
    policy.chmod(0o755)
    cache.run(["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", INSTALL,
               "sh", str(root), *packages], what="apt-get install (the image variant)")
    versions = cache.run(["chroot", str(root), "dpkg-query", "-W", "-f",
                          "${Package} ${Version}\\n", *packages],
                         what="dpkg-query (the variant's packages)").stdout.split("\n")
    policy.unlink()
    _restore_resolv_conf(root, resolv)
    cache.trim(root, trim)
    return [line for line in versions if line.strip()]


def _swap_resolv_conf(root: Path) -> bytes | None:
    """The host's resolver configuration in the tree for apt (the base's copy may be stale);
    the tree's own bytes, to put back."""
    conf = root / "etc/resolv.conf"
    saved = conf.read_bytes() if conf.is_file() and not conf.is_symlink() else None
    if conf.exists() or conf.is_symlink():
        conf.unlink()
    host = Path("/etc/resolv.conf")
    conf.write_bytes(host.read_bytes() if host.exists() else b"")
    return saved


def _restore_resolv_conf(root: Path, saved: bytes | None) -> None:
    conf = root / "etc/resolv.conf"
    conf.unlink(missing_ok=True)
    if saved is not None:
        conf.write_bytes(saved)


def open_line(prefix: str, write: Callable[[str], None]) -> Say:
    """A Progress that writes each message as a line under `prefix`, except that a message
    ending in " ..." leaves its line open and the next message ends it: the variant's build
    is one line, "building a variant with 1 more package (bzip2) ... done in 35 s"."""
    state = {"open": False}

    def say(msg: str) -> None:
        text = f" {msg}" if state["open"] else f"{prefix}{msg}"
        state["open"] = msg.endswith(" ...") and not state["open"]
        write(text if state["open"] else text + "\n")

    return say
