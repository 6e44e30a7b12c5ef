#!/usr/bin/env python3
"""The guest's ticker and memory-dirtying workload during a live migration (standard library
only: the host sends this file's text to the guest's python3 with -c, nothing is installed).

Every TICK seconds on the guest's clock it writes to the pages of a buffer at a set rate
(RATE MB/s: one byte in each 4 KiB page, the page count the rate asks for), then writes a
line to PORT: "SEQ PAGES_DONE GUEST_MONO_NS". It never catches up: a tick that comes late
starts the next tick from now, so work not done while the guest was stopped (or slowed) stays
not done, and the host sees it (vmlife.migration: the host stamps each line's arrival).

    python3 -c "$(cat ticker.py)" PORT RATE_MB_S BUFFER_MIB TICK_MS DURATION_S
"""
import os
import sys
import time

PAGE = 4096


def port_path(name):
    """/dev/virtio-ports/NAME, or the vportNpM device whose sysfs name is NAME."""
    path = "/dev/virtio-ports/" + name
    if os.path.exists(path):
        return path
    base = "/sys/class/virtio-ports"
    for dev in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        try:
            with open(os.path.join(base, dev, "name")) as f:
                if f.read().strip() == name:
                    return "/dev/" + dev
        except OSError:
            continue
    return path


def main(argv):
    port, rate, buf_mib, tick_ms, duration = (argv[0], float(argv[1]), int(argv[2]),
                                              float(argv[3]), float(argv[4]))
    path = port if port.startswith("/") else port_path(port)
    out = os.open(path, os.O_WRONLY)
    pages = max(1, buf_mib * 2**20 // PAGE)
    buf = bytearray(pages * PAGE)
    tick = tick_ms / 1000.0
    per_tick = rate * 1e6 / PAGE * tick          # pages per tick (a fraction is carried)
    owed, i, done, seq = 0.0, 0, 0, 0
    start = time.monotonic()
    due = start
    while time.monotonic() - start < duration:
        owed += per_tick
        n = int(owed)
        owed -= n
        for _ in range(n):
            j = (i % pages) * PAGE
            buf[j] = (buf[j] + 1) & 0xFF
            i += 1
        done += n
        seq += 1
        os.write(out, ("%d %d %d\n" % (seq, done, time.monotonic_ns())).encode())
        due += tick
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        else:
            due = now                             # late: no catching up
    os.close(out)


if __name__ == "__main__":
    main(sys.argv[1:])
