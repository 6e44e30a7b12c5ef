"""The QEMU a qemu environment runs: the system's (qemu-system-x86_64 on PATH, run as it is)
or another one, qemu:binary=PATH (its tree: image/qemu_tree.py, checked before anything
runs), with its -L directories and its modules directory. Everything that runs QEMU for the
environment asks this object: the KVM probe, the command line, the exit profiler's plugin
check, a second QEMU for a snapshot or a migration."""
from __future__ import annotations

import os

from .....core.errors import VirtbenchError
from .....machinery.image import qemu_fetch, qemu_tree
from . import version


def label_kind(kind: str, qemu_version: str | None, system: bool) -> str:
    """The label's first word (pure): the kind, with the QEMU version when it is not the
    system's (qemu(10.0.2))."""
    return kind if system or not qemu_version else f"{kind}({qemu_version})"


class QemuBinary:
    """One environment's QEMU. `given`: qemu:binary= ("" = the system's; fetched:SUITE = that
    suite's QEMU in virtbench's cache, image/qemu_fetch.py); `datadir`:
    qemu:datadir= ("" = from the binary's prefix)."""

    def __init__(self, given: str = "", datadir: str = "", what: str = "environment qemu"):
        self.given = given
        self.tree: qemu_tree.QemuTree | None = None
        # binary=fetched:SUITE: that suite's QEMU in virtbench's own cache (qemu fetch SUITE)
        self.suite = qemu_fetch.fetched_suite(given)
        if self.suite is not None:
            given = str(qemu_fetch.fetched_binary(self.suite))
        if given:
            self.tree = qemu_tree.resolve(given, datadir, system=version.qemu_binary())
            if not self.tree.system:
                try:
                    self.version()
                except VirtbenchError as exc:
                    raise VirtbenchError(f"{what}: binary={given} does not start ({exc}); "
                                         "name a working qemu-system-x86_64") from None
        elif datadir:
            raise VirtbenchError(f"{what}: datadir= is for another QEMU; give binary= too, "
                                 "or drop datadir=")

    @property
    def system(self) -> bool:
        return self.tree is None or self.tree.system

    @property
    def path(self) -> str | None:
        """The binary to run (None: the system has no QEMU; version() says so)."""
        return version.qemu_binary() if self.system else str(self.tree.binary)

    def version(self) -> tuple[str, str]:
        """(version, first line of -version); VirtbenchError if QEMU is missing or broken."""
        if self.system:
            return version.qemu_version()
        return version.qemu_version(str(self.tree.binary), self.process_env())

    def data_argv(self) -> list[str]:
        """-L DIR for each of its data directories ([] for the system's)."""
        return [] if self.system else self.tree.data_argv()

    def env(self) -> dict[str, str]:
        """The variables it needs beside ours ($QEMU_MODULE_DIR; {} for the system's)."""
        return {} if self.system else self.tree.env()

    def process_env(self) -> dict[str, str] | None:
        """The whole environment of a QEMU process (None: inherit ours as it is)."""
        extra = self.env()
        return dict(os.environ, **extra) if extra else None

    def label_kind(self, kind: str) -> str:
        return label_kind(kind, None if self.system else self.version()[0], self.system)

    def facts(self) -> dict:
        """The metadata: qemu_version, the -version line, qemu_binary and its directories."""
        ver, line = self.version()
        out = {"qemu_version": ver, "qemu": line, "qemu_binary": self.path,
               "qemu_system": self.system}
        if not self.system:
            out["qemu_data_dirs"] = [str(d) for d in self.tree.data_dirs]
            out["qemu_module_dir"] = str(self.tree.module_dir) if self.tree.module_dir else None
            if self.suite is not None:
                out["qemu_fetched_suite"] = self.suite
        return out
