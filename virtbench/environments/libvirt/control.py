"""What both forms of the libvirt kind do to their domain through libvirt: pause, resume,
and letting go of the connection. A mixin placed before the environment class."""
from __future__ import annotations

from .connection import binding


class DomainControl:
    conn = None        # the libvirt connection (virConnect), once resolved
    dom = None         # the domain (virDomain), once found or created
    paused = False

    def _libvirt(self):
        return binding()

    def pause(self) -> None:
        """virDomainSuspend: the domain stops while another environment measures."""
        if self.dom is not None:
            self.paused = True        # before the call: a failed suspend may still have taken
            self.dom.suspend()

    def resume(self) -> None:
        if self.dom is not None:
            self.dom.resume()
            self.paused = False

    def _close_connection(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except self._libvirt().libvirtError:
                pass
            self.conn = None
