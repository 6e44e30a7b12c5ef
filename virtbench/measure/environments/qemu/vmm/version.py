"""The QEMU binary and its version (asked once per binary and process): the system's
(qemu-system-x86_64 on PATH) or another one (qemu:binary=, image/qemu_tree.py), from its
`-version` before it runs and from QMP `query-version` once a guest is up."""
from __future__ import annotations

import shutil

from .....core.errors import EnvironmentUnusable
from .....machinery.image.qemu_tree import VersionFailed, ask_version, parse_version

QEMU = "qemu-system-x86_64"
__all__ = ["QEMU", "parse_version", "parse_qmp_version", "qemu_binary", "qemu_version"]


def parse_qmp_version(reply) -> str | None:
    """QMP `query-version`'s return ({"qemu": {"major": 10, "minor": 0, "micro": 2},
    "package": ...}) -> "10.0.2" (None if it is not one)."""
    try:
        q = reply["qemu"]
        return f"{int(q['major'])}.{int(q['minor'])}.{int(q['micro'])}"
    except (KeyError, TypeError, ValueError):
        return None


def qemu_binary() -> str | None:
    """The system's QEMU (on PATH), or None."""
    return shutil.which(QEMU)


_version_cache: dict[str, tuple[str, str]] = {}


def qemu_version(binary: str | None = None, env: dict | None = None) -> tuple[str, str]:
    """(version, first line of -version) of `binary` (default: the system's), run with
    `env` (the environment another QEMU needs: its module directory); VirtbenchError if
    QEMU is missing or broken."""
    binary = binary or qemu_binary()
    if binary is None:
        raise EnvironmentUnusable(f"{QEMU} not found; install it with: apt-get install qemu-system-x86")
    if binary not in _version_cache:
        try:
            _version_cache[binary] = ask_version(binary, env, timeout=20)
        except VersionFailed as exc:
            raise EnvironmentUnusable(f"{binary} -version failed: {exc}") from None
    return _version_cache[binary]
