"""The owner's side of guardian.py, shared by every kind that leaves things behind (QEMU
guests, libvirt domains, containers): the manifest the guardian reads, kept current
atomically, and the guardian process, started on it and dismissed with "done" at a normal
stop (on EOF without "done" it cleans up what the manifest lists)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from . import guardian


def write_manifest(workdir: Path, data: dict) -> None:
    """Replace workdir/manifest.json in one step (the guardian may read it at any moment)."""
    tmp = workdir / "manifest.json.part"
    tmp.write_text(json.dumps(data))
    os.replace(tmp, workdir / "manifest.json")


class Guardian:
    """A running guardian.py on `manifest`; only this process holds its pipe's write end."""

    def __init__(self, manifest: Path):
        r, w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, guardian.__file__, str(manifest)],
                stdin=r, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, close_fds=True)
        except BaseException:
            os.close(w)
            raise
        finally:
            os.close(r)
        os.set_inheritable(w, False)
        self._fd = w

    def dismiss(self) -> None:
        """The owner cleaned up itself: tell the guardian ("done"), let it end."""
        try:
            os.write(self._fd, b"done")
        except OSError:
            pass
        os.close(self._fd)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
