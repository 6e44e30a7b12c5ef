"""The boot timer of a qemu guest (Firecracker's boot-timer device, made of QEMU parts): two
`isa-debugcon` I/O ports whose bytes QEMU sends to sockets we listen on, each byte stamped
with the host's CLOCK_MONOTONIC as it arrives.

    port 0xe9   the guest's phase markers (guest/files/phase-mark, `vb.bt=233` on the
                kernel command line): one byte per marker
    port 0x402  the firmware's debug output (SeaBIOS prints there on pc and q35): its first
                byte is the firmware running (Debian's OVMF, a release build, prints
                nothing there: its share shows in to_kernel_s, cmdline/firmware.py)

`measure_boot(env)` boots a twin of a qemu environment with the timer attached and cuts its
boot into phases (vmlife/phases.py); the twin, the sockets and their directory are gone
after, whatever happened. The environment itself is paused meanwhile (its capabilities say
it can be), so that the twin boots on the machine as a measured guest runs."""
from __future__ import annotations

import shutil
import socket
import threading
import time
from pathlib import Path

from .....core.errors import AgentError, VirtbenchError
from .....machinery.host import watch
from .....machinery.vmlife.phases import PhaseError, Phases, guest_phases
from ..twin import twin_running

MARK_PORT = 0xE9          # the historical Bochs/QEMU debug port: nothing else writes there
FIRMWARE_PORT = 0x402     # SeaBIOS's debug port
READ_TIMEOUT_S = 0.5      # how long a reader waits for QEMU to connect, per try


class Listener:
    """A Unix socket QEMU connects to (a chardev with server=off); every chunk it sends,
    stamped with time.monotonic() on arrival."""

    def __init__(self, path: Path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(1)
        self.sock.settimeout(READ_TIMEOUT_S)
        self.stamps: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True,
                                        name=f"boot timer {path.name}")
        self._thread.start()

    def _read(self) -> None:
        conn = None
        while conn is None and not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
        if conn is None:
            return
        conn.settimeout(READ_TIMEOUT_S)
        with conn:
            while not self._stop.is_set():
                try:
                    data = conn.recv(4096)
                except socket.timeout:
                    continue
                except OSError:
                    return
                if not data:
                    return
                self.stamps.append((time.monotonic(), data.decode("latin-1")))

    def close(self) -> None:
        self._stop.set()
        try:
            self.sock.close()
        except OSError:
            pass
        self._thread.join(timeout=5)


class BootTimer:
    """The two ports' sockets in a private directory (swept if virtbench dies)."""

    def __init__(self):
        self.dir = watch.private_dir("vbtmp-")
        try:
            self.marks = Listener(self.dir / "marks.sock")
            self.firmware = Listener(self.dir / "firmware.sock")
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise

    def argv(self) -> list[str]:
        """QEMU's arguments: each port's chardev connects to our socket (server=off)."""
        out = []
        for name, port, listener in (("vbmarks", MARK_PORT, self.marks),
                                     ("vbfw", FIRMWARE_PORT, self.firmware)):
            out += ["-chardev", f"socket,id={name},path={listener.path}",
                    "-device", f"isa-debugcon,iobase={port:#x},chardev={name}"]
        return out

    @staticmethod
    def boot_args() -> list[str]:
        return [f"vb.bt={MARK_PORT}"]

    def close(self) -> None:
        for listener in (getattr(self, "marks", None), getattr(self, "firmware", None)):
            if listener is not None:
                listener.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def measure_boot(env, make_twin) -> Phases:
    """Boot a twin of `env` (`make_twin(extra_argv)`, a fresh environment of its spec) with
    the boot timer, cut its boot into phases, stop it. Raises VirtbenchError when the boot
    cannot be cut (a marker missing: the image predates the markers; rebuild it)."""
    timer = BootTimer()
    try:
        twin = make_twin(timer.argv())
        twin.extra_boot_args = timer.boot_args()
        with twin_running(env, twin):
            return _phases(env, twin, timer)
    finally:
        timer.close()


def _phases(env, twin, timer: BootTimer) -> Phases:
    """The started twin's boot cut into phases, from its timer's stamps and its kernel log."""
    start, ready = twin.vmm.started_at, twin.vmm.started_at + twin.boot_s
    try:
        kmsg = twin.exec(["dmesg"], timeout=60).stdout
    except AgentError as exc:
        raise VirtbenchError(f"{env.label}: the twin's kernel log: {exc}") from None
    try:
        phases = guest_phases(start, ready, kmsg, list(timer.marks.stamps),
                              list(timer.firmware.stamps))
    except PhaseError as exc:
        raise VirtbenchError(f"{env.label}: the boot cannot be cut into phases: {exc}"
                             " (an image built before the markers? virtbench image "
                             "build --force)") from None
    phases.detail["machine"] = twin.machine
    phases.detail["firmware"] = twin.values.get("firmware", "seabios")
    phases.detail["lifecycle"] = dict(twin.step_s)
    return phases
