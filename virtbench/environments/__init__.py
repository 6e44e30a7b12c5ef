"""Environment kinds. Each module defines one kind; KINDS maps its name to its class."""
from __future__ import annotations

from ..errors import VirtbenchError
from .base import Environment, EnvSpec, Option, Usability
from .container import Container
from .gvisor import Gvisor
from .libvirt import Libvirt
from .native import Native
from .qemu import Qemu
from .ssh import Ssh

KINDS: dict[str, type[Environment]] = {cls.kind: cls for cls in (Native, Qemu, Ssh, Libvirt, Container, Gvisor)}


def create(spec: EnvSpec | str) -> Environment:
    """An Environment for a spec, or a one-line error naming the valid kinds."""
    if isinstance(spec, str):
        spec = EnvSpec.parse(spec)
    if spec.kind not in KINDS:
        raise VirtbenchError(
            f"unknown environment kind {spec.kind!r}; valid kinds: {', '.join(sorted(KINDS))}")
    options = dict(spec.options)
    raw = options.pop("instances", "1")
    if not raw.isdigit() or not 1 <= int(raw) <= 64:
        raise VirtbenchError(f"environment {spec}: instances={raw} is not valid; use 1 to 64")
    if int(raw) == 1:
        return KINDS[spec.kind](EnvSpec(spec.kind, options))
    from .group import InstanceGroup
    members = [KINDS[spec.kind](EnvSpec(spec.kind, options)) for _ in range(int(raw))]
    return InstanceGroup(members, spec)


__all__ = ["Environment", "EnvSpec", "Option", "Usability", "KINDS", "create"]
