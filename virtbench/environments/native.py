"""`native`: bare metal, the baseline. The agent runs as a local subprocess."""
from __future__ import annotations

import platform
import sys

from .. import fingerprint, kernels
from ..transport import AGENT_SOURCE, SubprocessAgent
from .base import Environment


class Native(Environment):
    kind = "native"
    summary = "this host, no virtualization layer added (the baseline)"

    def start(self) -> None:
        self._kernel_dir = kernels.build()
        self.agent = SubprocessAgent([sys.executable, str(AGENT_SOURCE), "--stdio"],
                                     name=self.label)
        self.agent.ping()

    def stop(self) -> None:
        if self.agent is not None:
            self.agent.close()
            self.agent = None

    def kernel_path(self, name: str) -> str:
        return str(self._kernel_dir / name)

    def metadata(self) -> dict:
        facts = fingerprint.collect(self)
        facts["host_python"] = platform.python_version()
        return facts
