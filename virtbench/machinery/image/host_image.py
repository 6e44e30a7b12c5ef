"""The host image (`virtbench image build --variant host`): a guest that can host guests.

virtbench's guest image (guest_image.py) plus QEMU (qemu-system-x86, qemu-utils), perf (linux-perf),
tracefs and debugfs mounted at boot, KVM loaded at boot when the virtual CPU has SVM or VMX,
and virtbench itself, installed from the current source tree into a venv at build time from
wheels prepared on this host (the guest has no network to PyPI). Inside it, virtbench finds
its own guest image (the inner guest's root disk, kernel and initramfs) and its kernels
already in its cache, `/var/cache/virtbench`: nothing is built inside the guest.

Its root disk carries its own label, `vbhost`: the inner guest's root disk (label `vbroot`)
is a file inside it, never a second disk of the outer guest, so the outer's initramfs cannot
boot the wrong one whatever the bus order.

Cached as the guest image is, in a directory of its own (`<cache>/host-images/`, untouched by
`image prune` of the guest image), at two levels:

* `base-<hash>/rootfs/` -- debootstrap of the guest image's packages plus HOST_PACKAGES,
  keyed by that package recipe (minutes; rebuilt only when the list changes);
* `<hash>/` -- the bootable image, keyed by the base recipe, the guest image it embeds, the
  hash of virtbench's source tree (any change to the code inside rebuilds it) and this file:
  `root.raw` (ext4, label `vbhost`), `vmlinux`/`vmlinuz`, `initrd.img`, the SSH key pair,
  `wheels.txt` (what pip installed) and `info.json`.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..kernels import build as kernels
from ...core.errors import VirtbenchError
from . import cache, guest_image as image, initramfs
from .guest_image import ImageInfo, Progress

VARIANT = "host"
HOST_LABEL = "vbhost"
HOST_IMAGE_SIZE = "10G"          # sparse: ~2 GB used (QEMU, perf, the venv, the inner image)
HOST_PACKAGES = ("qemu-system-x86", "qemu-utils", "linux-perf", "python3-venv")
GUEST_CACHE = "/var/cache/virtbench"      # VIRTBENCH_CACHE inside the host image
VENV = "/opt/virtbench/venv"
WHEELS = "/opt/virtbench/wheels"

# Run by busybox init after the guest image's own rc (an extra sysinit line of inittab).
HOST_RC = """#!/bin/sh
# virtbench host image: tracing for perf, KVM when the virtual CPU can host guests.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing
if grep -qw svm /proc/cpuinfo; then
  modprobe kvm_amd
elif grep -qw vmx /proc/cpuinfo; then
  modprobe kvm_intel
fi
modprobe tun
echo "virtbench: host rc done at $(cut -d' ' -f1 /proc/uptime) s ($(ls /dev/kvm 2>/dev/null || echo no /dev/kvm))" > /dev/console
exit 0
"""

INITTAB_EXTRA = "::sysinit:/opt/virtbench/host-rc\n"

# `virtbench` inside the image: the venv's, with the image's cache unless one is given.
WRAPPER = f"""#!/bin/sh
export VIRTBENCH_CACHE="${{VIRTBENCH_CACHE:-{GUEST_CACHE}}}"
exec {VENV}/bin/virtbench "$@"
"""

_BUILDER_HASH = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def images_dir() -> Path:
    return kernels.cache_dir() / "host-images"


# -- the source tree ------------------------------------------------------------------------
def source_tree() -> Path:
    """The checkout virtbench runs from (pyproject.toml beside the package): what is installed
    into the image. One line with the fix when virtbench was installed without its sources."""
    root = Path(__file__).resolve().parents[3]
    if not (root / "pyproject.toml").is_file() or not (root / "virtbench").is_dir():
        raise VirtbenchError("the host image installs virtbench from its source tree, and this "
                             f"virtbench has none ({root} holds no pyproject.toml); run it from "
                             "a checkout (pip install -e .)")
    return root


_SOURCE_PARTS = ("pyproject.toml", "README.md", "virtbench", "studies")


def source_files(root: Path) -> list[Path]:
    """Every file that goes into virtbench's wheel (and a few more), sorted; caches left out."""
    files = []
    for part in _SOURCE_PARTS:
        p = root / part
        if p.is_file():
            files.append(p)
        elif p.is_dir():
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames[:] = sorted(d for d in dirnames
                                     if d not in ("__pycache__", "build") and not d.startswith("."))
                files.extend(Path(dirpath, f) for f in sorted(filenames)
                             if not f.endswith((".pyc", ".pyo")))
    return files


def source_hash(root: Path) -> str:
    h = hashlib.sha256()
    for p in source_files(root):
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


# -- recipes --------------------------------------------------------------------------------
def base_recipe() -> dict:
    base = image.base_recipe()
    return dict(base, packages=sorted(set(base["packages"]) | set(HOST_PACKAGES)),
                variant_name=VARIANT)


def recipe(root: Path | None = None) -> dict:
    return {"base": image._hash(base_recipe()), "guest_image": image.recipe_hash(),
            "source": source_hash(root or source_tree()), "label": HOST_LABEL,
            "size": HOST_IMAGE_SIZE, "host_rc": HOST_RC, "wrapper": WRAPPER,
            "python": GUEST_PYTHON, "builder": _BUILDER_HASH, "v": 1}


def recipe_hash(root: Path | None = None) -> str:
    return image._hash(recipe(root))


# -- entry points ---------------------------------------------------------------------------
def cached(root: Path | None = None) -> ImageInfo | None:
    """The host image for the current recipe if it is built, else None."""
    return image.built_image(images_dir() / recipe_hash(root), root_label=HOST_LABEL)


def build(force: bool = False, progress: Progress = None) -> ImageInfo:
    """Build the host image if needed (the guest image it embeds first), and describe it."""
    say = progress or (lambda msg: None)
    root = source_tree()
    if not force:
        info = cached(root)
        if info is not None:
            return info
    image.check_tools()
    guest = image.build(progress=say)             # the inner guest's image, embedded
    kdir = kernels.build()                         # our kernels, so nothing is built inside
    images_dir().mkdir(parents=True, exist_ok=True)
    with open(images_dir() / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not force:
            info = cached(root)
            if info is not None:
                return info
        return _build_locked(root, guest, kdir, force, say)


def prune(keep_current: bool = True) -> list[Path]:
    """Delete host images and base trees other than the current recipe's; return them."""
    keep = set()
    if keep_current:
        keep = {f"base-{image._hash(base_recipe())}"}
        try:
            keep.add(recipe_hash())
        except VirtbenchError:
            pass
    return cache.prune(images_dir(), keep)


def _build_locked(root: Path, guest: ImageInfo, kdir: Path, force: bool, say) -> ImageInfo:
    t0 = time.monotonic()
    base = build_base(force=force, progress=say)
    h = recipe_hash(root)
    out = images_dir() / h
    with cache.building(out) as tmp:
        wheels = tmp / "wheels"
        prepare_wheels(root, wheels, say)
        info = _build_image(base, tmp, h, guest, kdir, wheels, say)
        data = info.to_json()
        data["build_s"] = round(time.monotonic() - t0, 2)
        data["guest_image"] = guest.recipe_hash
        (tmp / "info.json").write_text(json.dumps(data, indent=2) + "\n")
        shutil.rmtree(wheels)
    result = cached(root)
    assert result is not None
    result.reused = False
    say(f"host image ready: {out} ({result.size_bytes / 1e6:.0f} MB on disk, "
        f"{result.build_s:.0f} s)")
    return result


# -- level 1: the base tree with QEMU and perf ----------------------------------------------
def build_base(force: bool = False, progress: Progress = None) -> Path:
    return image.bootstrap_tree(base_recipe(), images_dir(), force, progress,
                                  f"{len(base_recipe()['packages'])} packages, QEMU and perf "
                                  "among them")


# -- the wheels -----------------------------------------------------------------------------
GUEST_PYTHON = "3.11"            # Debian bookworm's python3, the venv's interpreter
# glibc 2.36 (bookworm): every manylinux tag it satisfies (pip does not expand a given tag)
GUEST_PLATFORMS = tuple(f"manylinux_2_{v}_x86_64" for v in range(36, 4, -1)) + (
    "manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64")


def wheel_argv(root: Path, dest: Path, python: str | None = None) -> list[str]:
    """pip building virtbench's own wheel from the tree at `root` into `dest`."""
    return [python or sys.executable, "-m", "pip", "wheel", "--quiet",
            "--disable-pip-version-check", "--no-deps", "--wheel-dir", str(dest), str(root)]


def download_argv(wheel: Path, dest: Path, python: str | None = None) -> list[str]:
    """pip fetching the wheels of `wheel`'s dependencies for the guest's Python and platform,
    whatever this host's Python is."""
    return [python or sys.executable, "-m", "pip", "download", "--quiet",
            "--disable-pip-version-check", "--dest", str(dest), "--only-binary=:all:",
            "--python-version", GUEST_PYTHON, "--implementation", "cp",
            *(a for tag in GUEST_PLATFORMS for a in ("--platform", tag)), str(wheel)]


def prepare_wheels(root: Path, dest: Path, say: Progress = None) -> list[str]:
    """virtbench's wheel and its dependencies' in `dest` (the guest installs from them offline)."""
    (say or (lambda m: None))("pip: virtbench's wheel and its dependencies' ...")
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="vbwheel-") as build_dir:
        # a copy of the tree: pip must not leave build/ or *.egg-info in the checkout
        src = Path(build_dir) / "src"
        for p in source_files(root):
            target = src / p.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, target)
        _pip(wheel_argv(src, dest))
    own = sorted(dest.glob("virtbench-*.whl"))
    if not own:
        raise VirtbenchError(f"pip wheel left no virtbench wheel in {dest}")
    _pip(download_argv(own[-1], dest))
    return sorted(p.name for p in dest.glob("*.whl"))


def _pip(argv: list[str]) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        last = (proc.stderr.strip() or proc.stdout.strip() or "(no output)").splitlines()[-1]
        raise VirtbenchError(f"pip {argv[3]} for the host image failed: {last}; it needs pip "
                             "and PyPI (or a configured pip index) on this host")


# -- level 2: the bootable host image -------------------------------------------------------
def _build_image(base: Path, out: Path, h: str, guest: ImageInfo, kdir: Path, wheels: Path,
                 say) -> ImageInfo:
    kver = image._linux_version(base)
    tree = out / "tree"
    say("copying the host base tree ...")
    image._run(["cp", "-a", "--reflink=auto", str(base), str(tree)],
               what="copying the host base tree")
    image._trim_modules(tree, kver)
    image._install_guest_files(tree)
    _install_host_files(tree)
    say("generating SSH keys ...")
    image._ssh_keys(tree, out)
    say("installing virtbench into a venv (offline, from the wheels) ...")
    installed = _install_venv(tree, wheels)
    (out / "wheels.txt").write_text("\n".join(installed) + "\n")
    say("embedding the guest image and the kernels ...")
    _embed_cache(tree, guest, kdir)
    shutil.copy2(tree / "boot" / f"vmlinuz-{kver}", out / "vmlinuz")
    kernel = out / "vmlinuz"
    config = tree / "boot" / f"config-{kver}"
    if config.exists() and "CONFIG_PVH=y" in config.read_text():
        elf = initramfs.extract_vmlinux((out / "vmlinuz").read_bytes())
        if elf is not None:
            (out / "vmlinux").write_bytes(elf)
            kernel = out / "vmlinux"
    say("building the initramfs ...")
    (out / "initrd.img").write_bytes(initramfs.build_initramfs(tree, kver))
    say("making the root disk (mkfs.ext4 -d) ...")
    raw = out / "root.raw"
    image._run(["truncate", "-s", HOST_IMAGE_SIZE, str(raw)])
    image._run(["mkfs.ext4", "-q", "-F", "-L", HOST_LABEL, "-E", "root_owner=0:0",
                "-d", str(tree), str(raw)], what="mkfs.ext4 -d")
    shutil.rmtree(tree)
    return ImageInfo(path=raw, linux=kernel, initrd=out / "initrd.img",
                     size_bytes=raw.stat().st_blocks * 512, recipe_hash=h, build_s=0.0,
                     reused=False, linux_version=kver, ssh_key=out / "id_ed25519",
                     root_label=HOST_LABEL)


def _install_host_files(tree: Path) -> None:
    vb = tree / "opt/virtbench"
    (vb / "host-rc").write_text(HOST_RC)
    os.chmod(vb / "host-rc", 0o755)
    inittab = tree / "etc/inittab"
    lines = inittab.read_text().splitlines(keepends=True)
    # after the image's own sysinit line: rc mounts /proc and /sys first
    at = max(i for i, ln in enumerate(lines) if ln.startswith("::sysinit:")) + 1
    inittab.write_text("".join(lines[:at]) + INITTAB_EXTRA + "".join(lines[at:]))
    (tree / "etc/fstab").write_text(f"LABEL={HOST_LABEL} / ext4 rw 0 0\n")
    (tree / "etc/hostname").write_text("vbhost\n")
    (tree / "etc/hosts").write_text("127.0.0.1 localhost\n127.0.1.1 vbhost\n")
    wrapper = tree / "usr/local/bin/virtbench"
    wrapper.parent.mkdir(parents=True, exist_ok=True)
    wrapper.write_text(WRAPPER)
    os.chmod(wrapper, 0o755)


def _install_venv(tree: Path, wheels: Path) -> list[str]:
    """A venv at VENV with virtbench installed from the wheels, offline, in a chroot: the
    guest's own Python builds it, so the venv and its bytecode are the guest's."""
    dest = tree / WHEELS.lstrip("/")
    shutil.copytree(wheels, dest)
    image._run(["chroot", str(tree), "python3", "-m", "venv", VENV], what="python3 -m venv")
    wheel = next(p.name for p in dest.glob("virtbench-*.whl"))
    image._run(["chroot", str(tree), f"{VENV}/bin/python", "-m", "pip", "install", "--quiet",
                "--no-index", "--no-cache-dir", "--disable-pip-version-check",
                "--find-links", WHEELS, f"{WHEELS}/{wheel}"], what="pip install (in the image)")
    proc = image._run(["chroot", str(tree), f"{VENV}/bin/python", "-m", "pip", "list",
                       "--format=freeze", "--disable-pip-version-check"], what="pip list")
    return sorted(proc.stdout.split())


def _embed_cache(tree: Path, guest: ImageInfo, kdir: Path) -> None:
    """The guest image and our kernels where virtbench inside looks for them (GUEST_CACHE)."""
    cache = tree / GUEST_CACHE.lstrip("/")
    dest = cache / "images" / guest.recipe_hash
    dest.mkdir(parents=True)
    for p in sorted(guest.dir.iterdir()):
        if p.is_file():
            image._run(["cp", "--sparse=always", "-p", str(p), str(dest / p.name)],
                       what=f"copying {p.name}")
    kdest = cache / "kernels" / kdir.name
    shutil.copytree(kdir, kdest)
