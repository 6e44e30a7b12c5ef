"""The guest's boot files from its tree (pure but for reading the tree): the uncompressed
kernel inside a bzImage (QEMU boots an ELF kernel through PVH: no firmware, no decompression
under TCG), and virtbench's own small initramfs: static busybox, the storage, ext4 and NIC
modules in their load order (from modules.dep), and our init (files/initramfs-init).
"""
from __future__ import annotations

import gzip
import io
import os
from pathlib import Path

from ...core.errors import VirtbenchError

FILES = Path(__file__).with_name("files")

# Drivers the initramfs loads (with their dependencies from modules.dep) so that the root
# disk is found on any bus (virtio_mmio: machine=microvm's transport), plus the NIC drivers
# (the real root runs no udev coldplug).
INITRAMFS_MODULES = (
    "virtio_pci", "virtio_mmio", "virtio_blk", "virtio_scsi", "virtio_console", "virtio_net",
    "ahci", "ata_piix", "ata_generic", "sd_mod", "nvme", "crc32c_generic", "ext4",
    "e1000", "8139cp", "8139too",
)


def extract_vmlinux(bzimage: bytes) -> bytes | None:
    """The uncompressed ELF kernel inside a bzImage (xz or gzip payload), or None."""
    import lzma
    import zlib
    for magic, make in ((b"\xfd7zXZ\x00", lambda: lzma.LZMADecompressor(format=lzma.FORMAT_XZ)),
                        (b"\x1f\x8b\x08", lambda: zlib.decompressobj(16 + zlib.MAX_WBITS))):
        start = bzimage.find(magic)
        while start != -1:
            try:
                data = make().decompress(bzimage[start:])
            except (lzma.LZMAError, zlib.error):
                data = b""
            if data.startswith(b"\x7fELF"):
                return data
            start = bzimage.find(magic, start + 1)
    return None


def parse_modules_dep(text: str) -> dict[str, list[str]]:
    """modules.dep -> {module name: [paths of it and its deps, deps first]} (names use _)."""
    deps: dict[str, tuple[str, list[str]]] = {}
    for line in text.splitlines():
        path, sep, rest = line.partition(":")
        if not sep:
            continue
        deps[_modname(path)] = (path.strip(), rest.split())
    return {name: _closure(name, deps) for name in deps}


def _modname(path: str) -> str:
    base = os.path.basename(path.strip())
    for suffix in (".xz", ".zst", ".gz"):
        base = base.removesuffix(suffix)
    return base.removesuffix(".ko").replace("-", "_")


def _closure(name: str, deps: dict[str, tuple[str, list[str]]]) -> list[str]:
    order: list[str] = []

    def visit(n: str, seen: set) -> None:
        if n in seen or n not in deps:
            return
        seen.add(n)
        path, requires = deps[n]
        for dep in reversed(requires):  # modules.dep lists a module's deps last-needed-first
            visit(_modname(dep), seen)
        if path not in order:
            order.append(path)

    visit(name, set())
    return order


def module_load_order(modules_dep: str, wanted, builtin: str = "") -> list[str]:
    """Paths (relative to /lib/modules/VER) of `wanted` and their deps, each after its deps."""
    table = parse_modules_dep(modules_dep)
    builtins = {_modname(line) for line in builtin.splitlines() if line.strip()}
    order: list[str] = []
    for name in wanted:
        key = name.replace("-", "_")
        if key in builtins:
            continue
        if key not in table:
            continue  # neither built in nor a module in this kernel: nothing to load
        for path in table[key]:
            if path not in order:
                order.append(path)
    return order


def _cpio_newc(entries) -> bytes:
    """A newc cpio archive of (name, mode, data-or-symlink-target) entries."""
    buf = io.BytesIO()
    ino = 1
    for name, mode, data in list(entries) + [("TRAILER!!!", 0, b"")]:
        name_b = name.encode() + b"\0"
        hdr = "070701" + "".join(f"{v:08X}" for v in (
            ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name_b), 0))
        buf.write(hdr.encode() + name_b)
        buf.write(b"\0" * (-(110 + len(name_b)) % 4))
        buf.write(data)
        buf.write(b"\0" * (-len(data) % 4))
        ino += 1
    return buf.getvalue()


def build_initramfs(tree: Path, kver: str) -> bytes:
    """Our initramfs: static busybox, the storage/ext4 modules in load order, and our init."""
    busybox = tree / "bin/busybox"
    if not busybox.exists():
        raise VirtbenchError("busybox-static missing from the guest tree; rebuild with --force")
    mdir = tree / "lib/modules" / kver
    builtin = (mdir / "modules.builtin").read_text() if (mdir / "modules.builtin").exists() else ""
    order = module_load_order((mdir / "modules.dep").read_text(), INITRAMFS_MODULES, builtin)
    entries = [("bin", 0o40755, b""), ("dev", 0o40755, b""), ("proc", 0o40755, b""),
               ("sys", 0o40755, b""), ("newroot", 0o40755, b""), ("modules", 0o40755, b""),
               ("bin/busybox", 0o100755, busybox.read_bytes()),
               ("bin/sh", 0o120777, b"busybox"),
               ("init", 0o100755, (FILES / "initramfs-init").read_bytes())]
    lines = []
    for rel in order:
        data = (mdir / rel).read_bytes()
        name = os.path.basename(rel)
        if name.endswith(".xz"):
            import lzma
            data, name = lzma.decompress(data), name[:-3]
        elif name.endswith(".zst"):
            raise VirtbenchError("zstd-compressed modules are not supported")
        entries.append((f"modules/{name}", 0o100644, data))
        lines.append(name)
    entries.append(("modules/order", 0o100644, ("\n".join(lines) + "\n").encode()))
    return gzip.compress(_cpio_newc(entries), compresslevel=6, mtime=0)
