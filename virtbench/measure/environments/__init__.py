"""Environment kinds. Each module or package defines one kind; KINDS maps its name to its
registry entry: the kind's class, or (libvirt, a kind of two forms) an entry whose factory
picks the form. An entry has `kind`, `summary`, `options`, `options_text()`, `probe()` and
`create(spec)` (docs/adding-an-environment.md)."""
from __future__ import annotations

from typing import Protocol

from ...core.errors import VirtbenchError
from ...core.suggest import did_you_mean
from .base import Environment
from .spec import EnvSpec, Option, Usability
from .container import Container
from .gvisor import Gvisor
from .libvirt import Libvirt
from .native import Native
from .nested import Nested
from .qemu import Qemu
from .ssh import Ssh


class Kind(Protocol):
    kind: str
    summary: str
    options: dict[str, Option]

    def options_text(self) -> str: ...
    def probe(self) -> Usability: ...
    def create(self, spec: EnvSpec) -> Environment: ...


KINDS: dict[str, Kind] = {entry.kind: entry
                          for entry in (Native, Qemu, Ssh, Libvirt, Container, Gvisor,
                                        Nested)}


def create(spec: EnvSpec | str) -> Environment:
    """An Environment for a spec, or a one-line error naming the valid kinds."""
    if isinstance(spec, str):
        spec = EnvSpec.parse(spec)
    if spec.kind not in KINDS:
        raise VirtbenchError(
            f"unknown environment kind {spec.kind!r}{did_you_mean(spec.kind, KINDS)}; valid kinds: {', '.join(sorted(KINDS))}")
    options = dict(spec.options)
    raw = options.pop("instances", "1")
    if not raw.isdigit() or not 1 <= int(raw) <= 64:
        raise VirtbenchError(f"environment {spec}: instances={raw} is not valid; use 1 to 64")
    make = KINDS[spec.kind].create
    if int(raw) == 1:
        return make(EnvSpec(spec.kind, options))
    from .group import InstanceGroup
    members = [make(EnvSpec(spec.kind, options)) for _ in range(int(raw))]
    return InstanceGroup(members, spec)


__all__ = ["Environment", "EnvSpec", "Option", "Usability", "Kind", "KINDS", "create"]
