"""The nested kind's program inside the outer guest: it boots the inner guest with the
virtbench installed there (the qemu kind, as any run would) and relays the inner guest's
agent to the host over a virtio-serial port of the outer guest.

    python -m virtbench.measure.environments.nested.inside --spec 'qemu:accel=kvm,...' \
        --scratch /dev/disk/by-id/virtio-vbscratch --port org.virtbench.inner --timeout 560

The host's virtbench starts it through the outer guest's agent, whose `exec` waits for a
command to end: so it forks at once. The child, in a session of its own (the agent's process
group is killed at a command's end), starts the inner guest, reports one JSON line on a pipe
(`{"state": "ready", "pid", "label", "metadata", ...}` or `{"state": "failed", "error"}`)
and relays until the inner guest's agent goes away or SIGTERM (the qemu kind's own signal
handling then stops the inner guest: power-off, QEMU, its namespace and work directory).
The parent prints what the child reported and exits: 0 when the inner guest is ready.

The inner guest's scratch disk is the outer guest's (`--scratch`, raw): a disk benchmark in
the inner guest goes through both layers' virtual disks to the file on the host.
"""
from __future__ import annotations

import argparse
import json
import os
import select
import sys
import time
from pathlib import Path

READY, FAILED = "ready", "failed"
BOOTS = 2            # boots of the inner guest tried before the start fails


def _report_line(obj: dict) -> bytes:
    return (json.dumps(obj, default=str) + "\n").encode()


def serve(args, report) -> int:
    """The child: boot the inner guest, report, relay; the qemu kind's stop() at the end.
    An inner guest that never answers is booted once more (KVM nested in TCG has been seen
    to hang a boot here); the report says so."""
    from ....core.errors import VirtbenchError
    from ..qemu import GuestBootError, Qemu
    from ..spec import EnvSpec
    from . import relay, support
    t0 = time.monotonic()
    port = relay.find_port(args.port)
    if port is None:
        report({"state": FAILED, "error": f"the outer guest has no virtio-serial port "
                                          f"{args.port}"})
        return 1
    notes: list[str] = []
    for boot in range(1, BOOTS + 1):
        env = Qemu(EnvSpec.parse(args.spec))
        env.scratch_given = (args.scratch, "raw")
        try:
            env.start()
            break
        except GuestBootError as exc:
            why = f"boot {boot} of the inner guest failed: {exc}{console_tail(exc.console_log)}"
            print(why, flush=True)
            if boot == BOOTS:
                report({"state": FAILED, "error": why, "notes": notes,
                        "seconds": round(time.monotonic() - t0, 2)})
                return 1
            notes.append(why + "; booted it again")
        except (VirtbenchError, OSError) as exc:
            report({"state": FAILED, "error": str(exc), "step_s": env.step_s, "notes": notes,
                    "seconds": round(time.monotonic() - t0, 2)})
            return 1
    try:
        outer = support.read_host_nesting()
        report({"state": READY, "pid": os.getpid(), "label": env.label, "boot_s": env.boot_s,
                "boots": boot, "step_s": env.step_s, "notes": notes + env.notes,
                "metadata": env.metadata(), "seconds": round(time.monotonic() - t0, 2),
                "outer_nesting": {"flag": outer.flag, "module": outer.module,
                                  "nested": outer.nested, "reason": outer.reason}})
        why = relay.relay(env.agent.sock, lambda: relay.open_port(port))
        print(f"relay ended: {why}", flush=True)
        return 0
    finally:
        env.stop()


def console_tail(path, lines: int = 3) -> str:
    """`; console: ...` with the last lines of a kept serial console, or ""."""
    try:
        text = Path(path).read_text(errors="replace") if path else ""
    except OSError:
        return ""
    tail = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    return "; console: " + " | ".join(tail) if tail else ""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", required=True, help="the inner guest's qemu spec")
    parser.add_argument("--scratch", required=True, help="the inner guest's scratch device")
    parser.add_argument("--port", required=True, help="the virtio-serial port's name")
    parser.add_argument("--timeout", type=float, required=True,
                        help="seconds the parent waits for the child's report")
    parser.add_argument("--log", default="/var/log/virtbench-inner.log",
                        help="the child's stdout and stderr")
    args = parser.parse_args(argv)
    r, w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(r)
        os.setsid()
        log = os.open(args.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(null)
        os.close(log)
        sys.stdout = os.fdopen(1, "w", buffering=1)
        sys.stderr = os.fdopen(2, "w", buffering=1)
        code = 1
        try:
            def report(obj: dict) -> None:
                nonlocal w
                if w >= 0:
                    os.write(w, _report_line(obj))
                    os.close(w)
                    w = -1
            code = serve(args, report)
        except BaseException as exc:     # noqa: B902 - said on the pipe, then the child ends
            import traceback
            traceback.print_exc()
            if w >= 0:
                os.write(w, _report_line({"state": FAILED, "error": f"{type(exc).__name__}: "
                                                                     f"{exc}"}))
            raise
        finally:
            os._exit(code)
    os.close(w)
    data = _wait_report(r, args.timeout)
    if data is None:
        os.kill(child, 15)          # SIGTERM: the child's environment stops what it made
        data = {"state": FAILED, "error": f"the inner guest was not ready within "
                                          f"{args.timeout:.0f} s (log: {args.log})"}
    print(json.dumps(data, default=str), flush=True)
    return 0 if data.get("state") == READY else 1


def _wait_report(fd: int, timeout: float) -> dict | None:
    """The child's one JSON line, or None after `timeout` s; a child that died without one
    is a failure saying so."""
    deadline = time.monotonic() + timeout
    buf = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], min(1.0, max(0.0, deadline - time.monotonic())))
        if not ready:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        buf += chunk
    else:
        return None
    line = buf.decode(errors="replace").strip()
    if not line:
        return {"state": FAILED, "error": "the inner side ended without a report"}
    try:
        return json.loads(line)
    except ValueError:
        return {"state": FAILED, "error": f"the inner side reported {line[:200]!r}"}


if __name__ == "__main__":
    sys.exit(main())
