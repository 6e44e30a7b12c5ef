"""The QEMU binary and its version (asked once per binary and process)."""
from __future__ import annotations

import re
import shutil
import subprocess

from ...core.errors import EnvironmentUnusable

QEMU = "qemu-system-x86_64"


def parse_version(text: str) -> str | None:
    """`qemu-system-x86_64 -version` output -> "7.2.22" (None if it is not QEMU's)."""
    m = re.search(r"QEMU emulator version (\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None


def qemu_binary() -> str | None:
    return shutil.which(QEMU)


_version_cache: dict[str, tuple[str, str]] = {}


def qemu_version() -> tuple[str, str]:
    """(version, first line of -version); VirtbenchError if QEMU is missing or broken."""
    binary = qemu_binary()
    if binary is None:
        raise EnvironmentUnusable(f"{QEMU} not found; install it with: apt-get install qemu-system-x86")
    if binary not in _version_cache:
        try:
            proc = subprocess.run([binary, "-version"], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise EnvironmentUnusable(f"{QEMU} -version failed: {exc}") from exc
        version = parse_version(proc.stdout)
        if proc.returncode != 0 or version is None:
            last = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()[-1]
            raise EnvironmentUnusable(f"{QEMU} -version failed: {last}")
        _version_cache[binary] = (version, proc.stdout.strip().splitlines()[0])
    return _version_cache[binary]
