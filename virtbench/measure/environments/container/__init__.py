"""The `container` kind: virtbench's Debian tree in a podman container (see environment.py)."""
from .environment import Container

__all__ = ["Container"]
