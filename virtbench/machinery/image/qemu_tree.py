"""Another QEMU's tree: a qemu-system-x86_64 installed under a prefix of its own (a Debian
package unpacked with `dpkg -x`, a build's `make install`), and what it needs beside it: its
data and firmware directories (QEMU's -L, one per directory, in QEMU's own search order) and
its modules directory ($QEMU_MODULE_DIR: Debian builds TCG itself as a module). Pure but for
`resolve()`, which looks at the disk and checks what it will run (host/trusted.py), and
`ask_version()`, which runs its `-version`."""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ...core.errors import VirtbenchError
from ..host.trusted import resolve_trusted

# under PREFIX (the binary's PREFIX/bin/qemu-system-x86_64): Debian's --firmwarepath
# (/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu) and QEMU's own default
DATA_DIRS = ("share/qemu", "share/seabios", "lib/ipxe/qemu")
MODULE_DIRS = ("lib/x86_64-linux-gnu/qemu", "lib64/qemu", "lib/qemu")
MODULE_ENV = "QEMU_MODULE_DIR"


def parse_version(text: str) -> str | None:
    """`qemu-system-x86_64 -version` output -> "7.2.22" (None if it is not QEMU's)."""
    m = re.search(r"QEMU emulator version (\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None


class VersionFailed(VirtbenchError):
    """`-version` did not say a QEMU version: the last line it printed, or why it did not run."""


def ask_version(binary: str, env: dict | None = None, timeout: float = 30.0
                ) -> tuple[str, str]:
    """(version, first line) of `binary -version`, run with `env`; VersionFailed otherwise."""
    try:
        proc = subprocess.run([binary, "-version"], capture_output=True, text=True,
                              timeout=timeout, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise VersionFailed(str(exc)) from None
    version = parse_version(proc.stdout)
    if proc.returncode == 0 and version:
        return version, proc.stdout.strip().splitlines()[0]
    raise VersionFailed((proc.stderr.strip() or proc.stdout.strip() or "no output")
                        .splitlines()[-1])


def prefix_of(binary: Path) -> Path:
    """The installation prefix of PREFIX/bin/qemu-system-x86_64 (its bin directory's parent)."""
    return binary.parent.parent


def data_dirs(prefix: Path, is_dir: Callable[[Path], bool]) -> list[Path]:
    """The data and firmware directories under `prefix` that exist, in search order (pure
    given `is_dir`)."""
    return [prefix / d for d in DATA_DIRS if is_dir(prefix / d)]


def module_dir(prefix: Path, is_dir: Callable[[Path], bool]) -> Path | None:
    """The first modules directory under `prefix` that exists, or None (pure given `is_dir`)."""
    return next((prefix / d for d in MODULE_DIRS if is_dir(prefix / d)), None)


@dataclass(frozen=True)
class QemuTree:
    """A QEMU binary and what it needs to run: -L directories and a modules directory."""
    binary: Path
    data_dirs: tuple[Path, ...] = ()
    module_dir: Path | None = None
    system: bool = False              # the system's own QEMU: run as it is, nothing added
    notes: tuple[str, ...] = field(default=())

    def data_argv(self) -> list[str]:
        """-L DIR for each data directory (QEMU searches them first, in this order)."""
        out: list[str] = []
        for d in self.data_dirs:
            if "," in str(d):
                raise ValueError(f"{d} holds a comma")
            out += ["-L", str(d)]
        return out

    def env(self) -> dict[str, str]:
        """The variables QEMU needs: its modules directory ({} for the system's)."""
        return {MODULE_ENV: str(self.module_dir)} if self.module_dir is not None else {}


def resolve(binary: str, datadir: str = "", system: str | None = None) -> QemuTree:
    """The tree of `binary` (an absolute path; symlinks followed once, then every part of it
    checked: host/trusted.py), its data directories from `datadir` (one directory, checked
    likewise) or from its prefix, its modules directory from its prefix. `system`: the
    system's QEMU (on PATH): the same file is the system's QEMU, run as it is."""
    real = resolve_trusted(binary, "environment qemu: binary=")
    if system is not None and not datadir:
        try:
            if Path(system).resolve() == real:
                return QemuTree(real, system=True)
        except OSError:
            pass
    prefix = prefix_of(real)
    if datadir:
        dirs = [resolve_trusted(datadir, "environment qemu: datadir=", leaf_is_dir=True)]
    else:
        dirs = [resolve_trusted(d, "environment qemu: the binary's data directory", leaf_is_dir=True)
                for d in data_dirs(prefix, Path.is_dir)]
    mods = module_dir(prefix, Path.is_dir)
    if mods is not None:
        mods = resolve_trusted(mods, "environment qemu: the binary's modules directory", leaf_is_dir=True)
    return QemuTree(real, tuple(dirs), mods)
