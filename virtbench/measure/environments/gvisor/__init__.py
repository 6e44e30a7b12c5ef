"""The `gvisor` kind: virtbench's Debian tree in a gVisor sandbox (see environment.py)."""
from .environment import Gvisor

__all__ = ["Gvisor"]
