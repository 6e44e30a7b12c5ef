"""The guest image: a Debian root disk with every tool the battery needs, built by virtbench.

Two cache levels under `<cache>/images/` (cache = $VIRTBENCH_CACHE or the user cache dir):

* `base-<hash>/rootfs/` -- the base tree (mmdebstrap), keyed by the package recipe. It is the slow
  part (a minute or two) and is rebuilt only when the package list changes.
* `variant-<hash>/rootfs/` -- the base tree plus the packages a study's benchmarks need
  (variant.py), keyed by the base recipe and the sorted package set; only when there are any.
* `<hash>/` -- the bootable image, keyed by the whole recipe (base + our own guest files +
  the agent + the initramfs module list): `root.raw` (ext4, label `vbroot`, made with
  `mkfs.ext4 -d`, no loop device), `vmlinuz`, `initrd.img` (our own small busybox initramfs),
  the per-image SSH client key pair and `info.json`. Changing the agent rebuilds only this
  level (a few seconds).

Both are built in a temporary directory beside their final place and renamed into it, so an
interrupted build never leaves a half image that looks finished (cache.py, as the host image).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from ...core.errors import VirtbenchError
from ..host import tools as hosttools
from ..kernels.build import cache_dir
from ..agent.transport import AGENT_SOURCE   # the agent every environment runs
from . import cache, initramfs, suites, variant
from .initramfs import INITRAMFS_MODULES, build_initramfs, extract_vmlinux

FILES = Path(__file__).with_name("files")
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
ROOT_LABEL = "vbroot"
# mmdebstrap installs the same minbase tree as debootstrap (Priority: required + apt) through
# apt in one go: about half debootstrap's time here (144 vs 282 s for the guest's packages,
# side by side on a loaded host, 2026-11-28).
BOOTSTRAP = "mmdebstrap"
IMAGE_SIZE = "3G"  # sparse; the tree is ~0.5 GB, the rest is room for benchmark files

# python3 (not python3-minimal): the agent needs json, which python3-minimal lacks.
PACKAGES = (
    "python3", "fio", "iperf3", "hdparm", "bonnie++", "sockperf", "openssh-server",
    "openssh-client", "iproute2", "ethtool", "iputils-ping", "kmod", "procps", "util-linux",
    "e2fsprogs", "ncbi-blast+", "linux-image-amd64", "udev", "busybox-static",
)

# Kernel module trees a guest never needs (about 250 MB of the 400 MB of modules).
MODULE_TRIM = ("kernel/drivers/gpu", "kernel/drivers/media", "kernel/drivers/net/wireless",
               "kernel/drivers/infiniband", "kernel/drivers/staging", "kernel/drivers/bluetooth",
               "kernel/drivers/iio", "kernel/drivers/isdn", "kernel/drivers/usb/gadget",
               "kernel/drivers/input/touchscreen", "kernel/sound", "kernel/net/bluetooth",
               "kernel/net/wireless", "kernel/net/mac80211", "kernel/drivers/net/can",
               "kernel/drivers/net/ethernet/mellanox", "kernel/drivers/scsi/lpfc",
               "kernel/drivers/scsi/qla2xxx", "kernel/drivers/hid")

TRIM = ("usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale",
        "usr/share/lintian", "usr/share/linda", "var/cache/apt", "var/lib/apt/lists",
        "var/cache/debconf/templates.dat-old", "var/log/bootstrap.log")

Progress = Callable[[str], None] | None


@dataclass
class ImageInfo:
    path: Path          # root.raw
    linux: Path         # vmlinux (ELF, booted through PVH) when Linux has PVH, else vmlinuz
    initrd: Path        # initrd.img
    size_bytes: int     # bytes the root image occupies on disk
    recipe_hash: str
    build_s: float      # seconds the build took (when it was built)
    reused: bool        # True when the cached image was used as is
    linux_version: str = ""
    ssh_key: Path | None = None  # private client key authorized for root in the guest
    root_label: str = ROOT_LABEL
    linux_suite: str = ""        # the Debian suite the kernel comes from ("": the image's own)
    linux_deb: str = ""          # the kernel's Debian package and version (dpkg-query)
    packages: list[str] = field(default_factory=list)   # "NAME VERSION" a variant added

    @property
    def dir(self) -> Path:
        return self.path.parent

    @property
    def bzimage(self) -> Path:
        """The kernel as Debian ships it (a bzImage with its EFI stub): what UEFI firmware
        boots, where `linux` may be the ELF that only PVH boots."""
        return self.dir / "vmlinuz"

    def to_json(self) -> dict:
        d = asdict(self)
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in d.items()}


# -- recipe --------------------------------------------------------------------------------
def base_recipe(linux: str | None = None) -> dict:
    """The base tree's recipe; `linux`: the Debian suite of the kernel (suites.py), None or
    the image's own suite for bookworm's (the default recipe, unchanged by the option)."""
    base = {"suite": SUITE, "mirror": MIRROR, "variant": "minbase", "tool": BOOTSTRAP,
            "packages": sorted(PACKAGES), "trim": list(TRIM), "v": 1}
    if not suites.is_default(linux):
        base.update(suites.base_changes(linux, MIRROR, PACKAGES))
    return base


_hash = cache.digest


# Hashed once, at import: the code that builds is the code that was hashed, even if the file
# is edited while a long run is going on.
_BUILDER_HASH = hashlib.sha256(Path(__file__).read_bytes()
                               + Path(initramfs.__file__).read_bytes()).hexdigest()


def tree_key(linux: str | None = None, packages=()) -> str:
    """The key of the tree the image is made from: the base tree's, or with `packages` the
    variant's (variant.py)."""
    base = base_recipe(linux)
    return variant.key(base, packages) if variant.extra(base, packages) else _hash(base)


def recipe(linux: str | None = None, packages=()) -> dict:
    """The bootable image's recipe; `packages`: a variant's (none: the image of old)."""
    files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(FILES.iterdir()) if p.is_file()}
    return {"base": tree_key(linux, packages), "files": files,
            "agent": hashlib.sha256(AGENT_SOURCE.read_bytes()).hexdigest(),
            "initramfs_modules": list(INITRAMFS_MODULES), "size": IMAGE_SIZE,
            "module_trim": list(MODULE_TRIM),
            "label": ROOT_LABEL, "builder": _BUILDER_HASH, "v": 1}


def recipe_hash(linux: str | None = None, packages=()) -> str:
    return _hash(recipe(linux, packages))


def images_dir() -> Path:
    return cache_dir() / "images"


# -- entry points --------------------------------------------------------------------------
def cached(linux: str | None = None, packages=()) -> ImageInfo | None:
    """The image for the current recipe (with the kernel of suite `linux`, the variant with
    `packages`) if it is already built, else None (no building)."""
    return built_image(images_dir() / recipe_hash(linux, packages))


def built_image(out: Path, **extra) -> ImageInfo | None:
    """The image built in `out` (its info.json), reused; None when there is none. `extra`:
    the fields a variant adds (the host image's root_label)."""
    info = out / "info.json"
    if not info.exists():
        return None
    data = json.loads(info.read_text())
    kernel = out / "vmlinux" if (out / "vmlinux").exists() else out / "vmlinuz"
    return ImageInfo(path=out / "root.raw", linux=kernel, initrd=out / "initrd.img",
                     size_bytes=data["size_bytes"], recipe_hash=data["recipe_hash"],
                     build_s=data["build_s"], reused=True,
                     linux_version=data.get("kernel_version", data.get("linux_version", "")),
                     ssh_key=out / "id_ed25519", linux_suite=data.get("linux_suite", ""),
                     linux_deb=data.get("linux_deb", ""),
                     packages=list(data.get("packages", [])), **extra)


def build_lock(linux: str | None = None) -> Path:
    """The lock file the builders of one suite's base tree and image serialise on (another
    suite's builds beside them: no need to wait)."""
    return images_dir() / f".build-{_hash(base_recipe(linux))}.lock"


def build(force: bool = False, progress: Progress = None,
          linux: str | None = None, packages=()) -> ImageInfo:
    """Build the guest image if needed (or always with force) and describe it; `linux`: the
    Debian suite of its kernel (suites.py; None: bookworm's); `packages`: the variant with
    these Debian packages added (variant.py; none: the image itself).

    Concurrent builders of one suite serialise on its lock file (build_lock); whoever comes
    second reuses the result.
    """
    say = progress or (lambda msg: None)
    linux = None if suites.is_default(linux) else suites.check_suite(linux)
    packages = variant.package_set(packages)
    if not force:
        info = cached(linux, packages)
        if info is not None:
            return info
    check_tools()
    images_dir().mkdir(parents=True, exist_ok=True)
    with open(build_lock(linux), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not force:
            info = cached(linux, packages)
            if info is not None:
                return info
        return _build_locked(force, say, linux, packages)


def _build_locked(force: bool, say, linux: str | None = None, packages=()) -> ImageInfo:
    t0 = time.monotonic()
    base = build_base(force=force, progress=say, linux=linux)
    base = variant.tree(base, base_recipe(linux), packages, images_dir(), say, force)
    h = recipe_hash(linux, packages)
    out = images_dir() / h
    with cache.building(out) as tmp:
        info = _build_image(base, tmp, h, say)
        if linux:
            check_series(info.linux_version, linux)
            info.linux_suite = linux
        info.packages = variant.installed(base)
        info_data = info.to_json()
        info_data["build_s"] = round(time.monotonic() - t0, 2)
        (tmp / "info.json").write_text(json.dumps(info_data, indent=2) + "\n")
    result = cached(linux, packages)
    assert result is not None
    result.reused = False
    say(f"image ready: {out} ({result.size_bytes / 1e6:.0f} MB on disk, {result.build_s:.0f} s)")
    return result


def prune(keep_current: bool = True) -> list[Path]:
    """Delete cached images and base trees other than the current recipe's; return them."""
    keep = ({h for s in suites.SUITES for h in (recipe_hash(s), f"base-{_hash(base_recipe(s))}")}
            if keep_current else set())
    return cache.prune(images_dir(), keep)


def check_tools() -> None:
    for tool, pkg in ((BOOTSTRAP, BOOTSTRAP), ("mkfs.ext4", "e2fsprogs"),
                      ("chroot", "coreutils")):
        if not hosttools.found(tool):
            raise VirtbenchError(f"{tool} not found (needed to build the guest image); "
                                 f"install it with: apt-get install {pkg}")
    if os.geteuid() != 0:
        raise VirtbenchError("building the guest image needs root (mmdebstrap and chroot); "
                             "run `virtbench image build` as root")


_run = cache.run


# -- level 1: the base tree -------------------------------------------------------------------
def build_base(force: bool = False, progress: Progress = None,
               linux: str | None = None) -> Path:
    return bootstrap_tree(base_recipe(linux), images_dir(), force, progress,
                          f"{len(PACKAGES)} packages"
                          + (f", Linux from {linux}" if linux else ""))


def check_series(release: str, suite: str) -> None:
    """The built kernel is of the series the label promises (suites.SUITES), else one line
    naming both."""
    got = suites.release_series(release)
    if got != suites.series(suite):
        raise VirtbenchError(f"the guest image for linux={suite} has Linux {release}, not the "
                             f"{suites.series(suite)} series virtbench expects of {suite}; "
                             "update SUITES in virtbench/machinery/image/suites.py")


def bootstrap_tree(base: dict, where: Path, force: bool = False, progress: Progress = None,
                   what: str = "") -> Path:
    """The base tree of a base recipe (suite, mirror, variant, tool, packages, trim), cached
    in `where/base-<hash>/rootfs` and built there atomically when missing (or `force`)."""
    say = progress or (lambda msg: None)
    h = _hash(base)
    out = where / f"base-{h}"
    if not force and (out / "done").exists():
        return out / "rootfs"
    where.mkdir(parents=True, exist_ok=True)
    with cache.building(out) as tmp:
        root = tmp / "rootfs"
        tool = base.get("tool", "debootstrap")
        say(f"{tool} {base['suite']} ({what or str(len(base['packages'])) + ' packages'}) "
            f"into {root} ...")
        _run([tool, f"--variant={base['variant']}",
              "--include=" + ",".join(base["packages"]), base["suite"], str(root),
              base["mirror"], *base.get("sources", ())], what=tool)
        cache.trim(root, base["trim"])   # and the stock initramfs: ours replaces it
        (tmp / "recipe.json").write_text(json.dumps(base, indent=2))
        (tmp / "done").write_text("ok\n")
    return out / "rootfs"


# -- level 2: the bootable image ------------------------------------------------------------
def _linux_version(root: Path) -> str:
    versions = sorted(p.name for p in (root / "lib/modules").iterdir() if p.is_dir())
    if not versions:
        raise VirtbenchError("the guest tree has no kernel modules; rebuild with --force")
    return versions[-1]


def _build_image(base: Path, out: Path, h: str, say) -> ImageInfo:
    kver = _linux_version(base)
    tree = out / "tree"
    say("copying the base tree ...")
    _run(["cp", "-a", "--reflink=auto", str(base), str(tree)], what="copying the base tree")
    _trim_modules(tree, kver)
    deb = suites.kernel_deb(_run(["chroot", str(tree), *suites.DPKG_QUERY],
                                 what="dpkg-query (the kernel's package)").stdout, kver)
    _install_guest_files(tree)
    say("generating SSH keys ...")
    _ssh_keys(tree, out)
    shutil.copy2(tree / "boot" / f"vmlinuz-{kver}", out / "vmlinuz")
    kernel = out / "vmlinuz"
    config = tree / "boot" / f"config-{kver}"
    if config.exists() and "CONFIG_PVH=y" in config.read_text():
        elf = extract_vmlinux((out / "vmlinuz").read_bytes())
        if elf is not None:
            # QEMU boots an ELF kernel through PVH: no firmware, no decompression under TCG
            # (about 3.5 s less per boot here)
            (out / "vmlinux").write_bytes(elf)
            kernel = out / "vmlinux"
    say("building the initramfs ...")
    (out / "initrd.img").write_bytes(build_initramfs(tree, kver))
    say("making the root disk (mkfs.ext4 -d) ...")
    raw = out / "root.raw"
    _run(["truncate", "-s", IMAGE_SIZE, str(raw)])
    _run(["mkfs.ext4", "-q", "-F", "-L", ROOT_LABEL, "-E", "root_owner=0:0",
          "-d", str(tree), str(raw)], what="mkfs.ext4 -d")
    shutil.rmtree(tree)
    size = raw.stat().st_blocks * 512
    return ImageInfo(path=raw, linux=kernel, initrd=out / "initrd.img",
                     size_bytes=size, recipe_hash=h, build_s=0.0, reused=False,
                     linux_version=kver, ssh_key=out / "id_ed25519", linux_deb=deb)


def _trim_modules(tree: Path, kver: str) -> None:
    mdir = tree / "lib/modules" / kver
    for rel in MODULE_TRIM:
        shutil.rmtree(mdir / rel, ignore_errors=True)
    _run(["chroot", str(tree), "depmod", "-a", kver], what="depmod")


def _install_guest_files(tree: Path) -> None:
    vb = tree / "opt/virtbench"
    (vb / "sbin").mkdir(parents=True, exist_ok=True)
    shutil.copy2(AGENT_SOURCE, vb / "agent.py")
    for name in ("rc", "agent-svc", "phase-mark"):
        shutil.copy2(FILES / name, vb / name)
        os.chmod(vb / name, 0o755)
    init = vb / "sbin/init"
    if init.exists() or init.is_symlink():
        init.unlink()
    init.symlink_to("/bin/busybox")
    (tree / "etc/inittab").write_text((FILES / "inittab").read_text())
    (tree / "etc/hostname").write_text("vbguest\n")
    (tree / "etc/hosts").write_text("127.0.0.1 localhost\n127.0.1.1 vbguest\n")
    (tree / "etc/fstab").write_text(f"LABEL={ROOT_LABEL} / ext4 rw 0 0\n")
    (vb / "kernels").mkdir(exist_ok=True)
    cfg = tree / "etc/ssh/sshd_config.d"
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / "virtbench.conf").write_text(
        "PasswordAuthentication no\nPermitRootLogin prohibit-password\nUseDNS no\n"
        # every cipher OpenSSH 9.2 still has, so that scp can measure each (RIKEN 2012)
        "Ciphers aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-gcm@openssh.com,"
        "chacha20-poly1305@openssh.com,aes128-cbc,aes192-cbc,aes256-cbc,3des-cbc\n")


def _ssh_keys(tree: Path, out: Path) -> None:
    """A fresh host key and a client key pair per image, generated with the guest's ssh-keygen."""
    for p in (tree / "etc/ssh").glob("ssh_host_*"):
        p.unlink()
    _run(["chroot", str(tree), "ssh-keygen", "-q", "-t", "ed25519", "-N", "",
          "-f", "/etc/ssh/ssh_host_ed25519_key", "-C", "vbguest"], what="ssh-keygen (host key)")
    ssh = tree / "root/.ssh"
    ssh.mkdir(mode=0o700, parents=True, exist_ok=True)
    _run(["chroot", str(tree), "ssh-keygen", "-q", "-t", "ed25519", "-N", "",
          "-f", "/root/.ssh/id_ed25519", "-C", "virtbench"], what="ssh-keygen (client key)")
    shutil.copy2(ssh / "id_ed25519.pub", ssh / "authorized_keys")
    shutil.copy2(ssh / "id_ed25519", out / "id_ed25519")
    shutil.copy2(ssh / "id_ed25519.pub", out / "id_ed25519.pub")
    os.chmod(out / "id_ed25519", 0o600)
    shutil.copy2(tree / "etc/ssh/ssh_host_ed25519_key.pub", out / "ssh_host_ed25519_key.pub")
