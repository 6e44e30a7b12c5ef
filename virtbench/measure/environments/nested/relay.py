"""Bytes both ways between the inner guest's agent socket and a virtio-serial port of the
outer guest, so the host's virtbench speaks the agent protocol to the inner guest as to any
guest (the relay reads nothing of it).

A virtio-serial port has two habits the loop keeps to: while no host is connected to it, a
read returns EOF at once (wait, reopen, go on: only the agent's side closing ends the relay),
and a write blocks (the port is non-blocking here, so a write waits at most `write_wait_s`
for a host, then the bytes are dropped: nobody is there to read them).
"""
from __future__ import annotations

import os
import select
import socket
import time
from pathlib import Path
from typing import Callable

PORTS = Path("/dev/virtio-ports")
SYSFS_PORTS = Path("/sys/class/virtio-ports")


def find_port(name: str, dev: Path = PORTS, sysfs: Path = SYSFS_PORTS) -> Path | None:
    """The character device of the virtio-serial port called `name`: udev's link, else the
    port found by its name in sysfs (as the guest's agent service does)."""
    link = dev / name
    if link.exists():
        return link
    try:
        entries = sorted(sysfs.iterdir())
    except OSError:
        return None
    for entry in entries:
        try:
            if (entry / "name").read_text().strip() == name:
                return Path("/dev") / entry.name
        except OSError:
            continue
    return None


def open_port(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)


def _write_port(fd: int, data: bytes, wait_s: float) -> bool:
    """All of `data` to the non-blocking port, waiting at most `wait_s` for it to take more;
    False when it did not (no host connected)."""
    view = memoryview(data)
    deadline = time.monotonic() + wait_s
    while view:
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            n = 0
        view = view[n:]
        if view:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            select.select([], [fd], [], min(left, 0.5))
    return True


def relay(agent: socket.socket, reopen: Callable[[], int], idle_s: float = 0.2,
          write_wait_s: float = 30.0, stop: Callable[[], bool] = lambda: False) -> str:
    """Copy bytes between `agent` (the inner guest's agent socket) and the port `reopen()`
    opens, until the agent's side closes or `stop()`; returns why it ended."""
    port = reopen()
    try:
        while not stop():
            ready, _, _ = select.select([agent, port], [], [], 0.5)
            if agent in ready:
                data = agent.recv(1 << 16)
                if not data:
                    return "the inner guest's agent closed its socket"
                _write_port(port, data, write_wait_s)
            if port in ready:
                try:
                    data = os.read(port, 1 << 16)
                except BlockingIOError:
                    continue
                if not data:               # no host on the port: wait for one
                    os.close(port)
                    port = -1
                    time.sleep(idle_s)
                    port = reopen()
                    continue
                agent.sendall(data)
        return "asked to stop"
    finally:
        if port >= 0:
            os.close(port)
