#!/usr/bin/env python3
"""The virtbench agent: the one small program that runs inside every environment.

Standard library only, so it runs on any python3 >= 3.7 (a guest's python3-minimal included).
It reads requests and writes replies as newline-delimited JSON (ASCII only, so the same
framing works over a pipe, a virtio-serial port or a raw serial line) and parses nothing:
every benchmark's output goes back to the host verbatim.

Requests (one JSON object a line; "id" is echoed back):
  {"op": "ping"}
  {"op": "exec", "argv": [...], "env": {...}, "timeout": 60, "cwd": "/tmp", "stdin": "",
   "stream": true, "heartbeat": 10}
  {"op": "put", "path": "/x", "data_b64": "...", "mode": 493}
  {"op": "get", "path": "/x"}
  {"op": "shutdown"}                       # ends the agent loop
Replies: {"id": .., "ok": true, ...} or {"id": .., "ok": false, "error": "..."}.
An exec reply carries exit, stdout, stderr, wall_s, user_s, sys_s and timed_out.
With "stream": true, while the command runs the agent also sends the output as it comes,
at most once per STREAM_EVERY_S and at most STREAM_CHUNK bytes of each stream per message
(the newest; "skipped" counts what was left out): {"id": .., "event": "output", "stdout": "..",
"stderr": "..", "skipped": {"stdout": n, "stderr": n}}. The reply still carries the whole
output; the events are what the host keeps of a command whose agent is lost before it answers.
With "heartbeat": N as well, a command that prints nothing for N s still gets an event,
{"id": .., "event": "alive"}, every N s: a host that hears nothing for much longer knows the
machine itself has stopped (a wedged guest), not the command.
A ping reply carries "mono": the agent's CLOCK_MONOTONIC (time.monotonic()) when it answered;
"started_mono": when this program's first line ran, and "exec_mono": when its process was
exec'd (its start time in /proc, clock ticks since boot, against CLOCK_BOOTTIME: to within a
tick), both on the same clock (null where the system cannot say): a start's phases.

Transports: --stdio (a subprocess of the host), --port PATH (a virtio-serial port such as
/dev/virtio-ports/org.virtbench.agent), --serial PATH (a tty, put in raw mode).
"""
import argparse
import base64
import json
import os
import platform
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

STARTED_MONO = time.monotonic()
AGENT_VERSION = 1
MAX_OUTPUT = 32 * 1024 * 1024  # bytes of stdout/stderr returned per stream
STREAM_EVERY_S = 1.0           # "stream": at most one output event a second...
STREAM_CHUNK = 16 * 1024       # ... with at most the newest 16 KiB of each stream

# With --stdio: the host's end of our stdin. When the host goes away (its ssh connection
# dropped, the host killed), a command still running is killed rather than left to its
# time limit: nobody will read its result.
HANGUP_FD = None


def _kill_on_hangup(fd, proc, done):
    """Until `done` is set: when `fd`'s writer hangs up, kill `proc`'s process group.
    Only hang-ups count (POLLHUP, POLLRDHUP, POLLERR), never pending data."""
    poller = select.poll()
    poller.register(fd, getattr(select, "POLLRDHUP", 0))
    gone = select.POLLHUP | select.POLLERR | getattr(select, "POLLRDHUP", 0)
    while not done.is_set():
        if any(ev & gone for _, ev in poller.poll(200)):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            return


def _decode(data):
    if len(data) > MAX_OUTPUT:
        data = data[-MAX_OUTPUT:]
    return data.decode("utf-8", errors="replace")


class _Collector(object):
    """Reads one pipe to its end in a thread; keeps everything, and what is new since the
    last take() (the newest STREAM_CHUNK bytes of it, counting the bytes left out)."""

    def __init__(self, pipe):
        self.pipe = pipe
        self.chunks = []
        self.size = 0
        self.new = bytearray()
        self.skipped = 0
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run)
        self.thread.daemon = True
        self.thread.start()

    def _run(self):
        fd = self.pipe.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            with self.lock:
                self.chunks.append(chunk)
                self.size += len(chunk)
                while self.size > 2 * MAX_OUTPUT and len(self.chunks) > 1:
                    self.size -= len(self.chunks.pop(0))   # only the tail is returned anyway
                self.new += chunk
                if len(self.new) > STREAM_CHUNK:
                    self.skipped += len(self.new) - STREAM_CHUNK
                    del self.new[:len(self.new) - STREAM_CHUNK]

    def take(self):
        with self.lock:
            new, skipped = bytes(self.new), self.skipped
            self.new, self.skipped = bytearray(), 0
        return new, skipped

    def data(self):
        self.thread.join()
        return b"".join(self.chunks)


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _communicate_streaming(proc, stdin, timeout, emit, heartbeat=None):
    """(stdout, stderr, timed_out) like proc.communicate(stdin, timeout) plus a kill of the
    process group at the time limit, emitting the output as it comes (see the module's
    docstring) meanwhile, and an "alive" event after `heartbeat` s without one."""
    def feed():
        try:
            if stdin:
                proc.stdin.write(stdin)
        except (BrokenPipeError, OSError):
            pass
        finally:
            try:
                proc.stdin.close()
            except OSError:
                pass
    writer = threading.Thread(target=feed)
    writer.daemon = True
    writer.start()
    out, err = _Collector(proc.stdout), _Collector(proc.stderr)
    deadline = None if timeout is None else time.monotonic() + timeout
    timed_out = False
    last = [time.monotonic()]

    def flush():
        (o, so), (e, se) = out.take(), err.take()
        if o or e:
            event = {"event": "output", "stdout": _decode(o), "stderr": _decode(e)}
            if so or se:
                event["skipped"] = {"stdout": so, "stderr": se}
        elif heartbeat and time.monotonic() - last[0] >= heartbeat:
            event = {"event": "alive"}
        else:
            return
        emit(event)
        last[0] = time.monotonic()

    while True:
        wait = STREAM_EVERY_S
        if deadline is not None:
            wait = min(wait, max(0.0, deadline - time.monotonic()))
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            if deadline is not None and time.monotonic() >= deadline:
                timed_out = True
                _kill_group(proc)
                proc.wait()
                break
            flush()
    return out.data(), err.data(), timed_out


def do_exec(req, emit=None):
    argv = req["argv"]
    env = dict(os.environ)
    env.update(req.get("env") or {})
    timeout = req.get("timeout")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    timed_out = False
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=req.get("cwd") or None,
            env=env,
            start_new_session=True,  # so a timeout kills the whole process group
        )
    except OSError as exc:
        return {"ok": True, "exit": 127, "stdout": "", "stderr": "%s: %s" % (argv[0], exc),
                "wall_s": 0.0, "user_s": 0.0, "sys_s": 0.0, "timed_out": False}
    stdin = (req.get("stdin") or "").encode()
    done = threading.Event()
    if HANGUP_FD is not None:
        threading.Thread(target=_kill_on_hangup, args=(HANGUP_FD, proc, done),
                         daemon=True).start()
    try:
        if req.get("stream") and emit is not None:
            out, err, timed_out = _communicate_streaming(proc, stdin, timeout, emit,
                                                         req.get("heartbeat"))
        else:
            out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        out, err = proc.communicate()
    finally:
        done.set()
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "ok": True,
        "exit": proc.returncode,
        "stdout": _decode(out),
        "stderr": _decode(err),
        "wall_s": wall,
        "user_s": after.ru_utime - before.ru_utime,
        "sys_s": after.ru_stime - before.ru_stime,
        "timed_out": timed_out,
    }


def do_put(req):
    path = req["path"]
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(base64.b64decode(req["data_b64"]))
    os.chmod(tmp, req.get("mode", 0o644))
    os.replace(tmp, path)
    return {"ok": True}


def do_get(req):
    with open(req["path"], "rb") as f:
        return {"ok": True, "data_b64": base64.b64encode(f.read()).decode("ascii")}


def do_ping(_req):
    return {"ok": True, "agent_version": AGENT_VERSION, "hostname": socket.gethostname(),
            "python": platform.python_version(), "pid": os.getpid(),
            "uptime_s": _uptime(), "mono": time.monotonic(), "started_mono": STARTED_MONO,
            "exec_mono": EXEC_MONO}


def _exec_mono():
    """This process's exec moment on time.monotonic()'s clock, or None."""
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
        return time.monotonic() - age
    except (OSError, ValueError, IndexError, AttributeError):
        return None


EXEC_MONO = _exec_mono()


def _uptime():
    try:
        with open("/proc/uptime") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


HANDLERS = {"exec": do_exec, "put": do_put, "get": do_get, "ping": do_ping}


def handle(req, emit=None):
    """The reply to `req`; `emit(event)` sends an event for it before the reply (exec)."""
    op = req.get("op")
    if op not in HANDLERS:
        return {"ok": False, "error": "unknown op %r" % (op,)}
    try:
        if op == "exec":
            return do_exec(req, emit)
        return HANDLERS[op](req)
    except Exception as exc:  # the agent must survive any one bad request
        return {"ok": False, "error": "%s: %s" % (type(exc).__name__, exc)}


def send(writer, data):
    """Write all of `data`: a raw port (virtio-serial) may take only part of it per write."""
    view = memoryview(data)
    while view:
        n = writer.write(view)
        view = view[n or 0:]
    writer.flush()


def _emitter(writer, rid):
    """emit(event): one event line for request `rid` (a send failing is not the command's
    failure: the host may be gone, and the command is killed on hang-up anyway)."""
    def emit(event):
        event = dict(event, id=rid)
        try:
            send(writer, (json.dumps(event, ensure_ascii=True) + "\n").encode("ascii"))
        except (OSError, ValueError):
            pass
    return emit


def serve(reader, writer):
    """Answer requests until EOF (returns False) or a shutdown request (returns True)."""
    for raw in iter(reader.readline, b""):
        line = raw.strip()
        if not line:
            continue
        try:
            req = json.loads(line.decode("ascii", errors="replace"))
        except ValueError:
            reply = {"id": None, "ok": False, "error": "malformed request line"}
            req = {}
        else:
            if req.get("op") == "shutdown":
                send(writer, (json.dumps({"id": req.get("id"), "ok": True}) + "\n").encode())
                return True
            reply = handle(req, _emitter(writer, req.get("id")))
        reply["id"] = req.get("id")
        send(writer, (json.dumps(reply, ensure_ascii=True) + "\n").encode("ascii"))
    return False


def _raw_tty(fd):
    import termios
    import tty
    tty.setraw(fd)
    attrs = termios.tcgetattr(fd)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSANOW, attrs)


def main(argv=None):
    parser = argparse.ArgumentParser(description="virtbench agent")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--stdio", action="store_true", help="serve on stdin/stdout")
    group.add_argument("--port", help="serve on a virtio-serial port (character device)")
    group.add_argument("--serial", help="serve on a serial tty (raw mode)")
    parser.add_argument("--remove-on-exit", metavar="DIR", action="append", default=[],
                        help="with --stdio: delete DIR (where the host staged this agent and "
                             "its tools, or its scratch directory) when the host goes away, "
                             "even if it died; repeatable")
    args = parser.parse_args(argv)
    if args.stdio:
        global HANGUP_FD
        HANGUP_FD = sys.stdin.fileno()
        try:
            serve(sys.stdin.buffer, sys.stdout.buffer)
        finally:
            for d in args.remove_on_exit:
                shutil.rmtree(d, ignore_errors=True)
        return 0
    path = args.port or args.serial
    # A port lives as long as the guest. While no host is connected a virtio-serial read
    # returns EOF at once, so EOF means "wait and reopen", and only shutdown ends the loop.
    while True:
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        if args.serial:
            _raw_tty(fd)
        reader = os.fdopen(fd, "rb", closefd=False)   # buffered: readline in big reads
        writer = os.fdopen(fd, "wb", closefd=False)   # buffered: a reply is written whole
        try:
            if serve(reader, writer):
                return 0
        except OSError:
            pass
        finally:
            os.close(fd)
        time.sleep(0.2)


if __name__ == "__main__":
    sys.exit(main())
