"""The agent in a container, over `podman run -i`'s stdin and stdout."""
from __future__ import annotations

import subprocess

from ....machinery.agent.transport import AgentClient


class PodmanAgent(AgentClient):
    """The agent in a container, over `podman run -i`'s stdin/stdout; stderr to a file."""

    def __init__(self, argv: list[str], stderr_path, name: str = "container agent"):
        with open(stderr_path, "wb") as err:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=err, start_new_session=True)
        super().__init__(self.proc.stdout.fileno(), self.proc.stdin.fileno(), name=name)

    def close(self, timeout: float = 10) -> None:
        if self.proc.poll() is None:
            self.shutdown()
            try:
                self.proc.stdin.close()     # EOF: the agent ends, podman removes the container
                self.proc.wait(timeout=timeout)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
