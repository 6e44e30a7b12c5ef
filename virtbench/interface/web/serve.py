"""`virtbench serve`: the web view over a store, read-only, on 127.0.0.1 by default.

The socket is bound here before uvicorn starts, so a port in use or an address that is not
this host's is one line (exit 2), and `--port 0` takes a free port and says which. Binding
anywhere but the loopback prints one line: the view has no authentication. Ctrl-C (or
SIGTERM) stops uvicorn, which finishes the requests in flight; then the store is closed.

uvicorn, once stopped by a signal, raises it again with the handler it found in place: for
SIGTERM that is ours (`_terminated`), so the command ends in one line and exit 0 instead of
being killed by the default action (exit 143, nothing said)."""
from __future__ import annotations

import ipaddress
import signal
import socket

from ...core.errors import VirtbenchError

LOOPBACK = ("localhost",)


class ServeTerminated(BaseException):
    """SIGTERM arrived: serve() ends (a BaseException, like KeyboardInterrupt, so that no
    `except Exception` on the way takes it for an error)."""


def _terminated(signum, _frame) -> None:
    raise ServeTerminated(signal.Signals(signum).name)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port; one line when it cannot be had."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise VirtbenchError(f"--host {host}: not an address of this host ({exc.strerror}); "
                             "give an IP address such as 127.0.0.1") from None
    family, kind, proto, _, addr = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise VirtbenchError(f"--host {host} --port {port}: cannot listen there "
                             f"({exc.strerror}); pick another --port (0: any free one)") \
            from None
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def serve(store, host: str, port: int, say, warn) -> str:
    """Serve `store` (opened read-only) until Ctrl-C (KeyboardInterrupt, as ever) or
    SIGTERM (returns "SIGTERM"); `say` and `warn` print one line each (the address; the
    warning when not on the loopback)."""
    try:
        import uvicorn
        from .app import make_app
    except ImportError as exc:
        raise VirtbenchError(f"virtbench serve needs {exc.name}: install the web extra "
                             "(pip install 'virtbench[web]')") from None
    sock = bind(host, port)
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        if not is_loopback(host):
            warn(f"virtbench serve: listening on {host} without authentication: anyone who "
                 "can reach this address reads the store; use --host 127.0.0.1 and an SSH "
                 "tunnel, or a proxy that authenticates")
        config = uvicorn.Config(make_app(store), log_level="warning", access_log=False,
                                lifespan="off", server_header=False)
        server = uvicorn.Server(config)
        say(f"virtbench serve: {url_of(sock)} reading {store.shown} (read-only); "
            "Ctrl-C stops it")
        server.run(sockets=[sock])
    except ServeTerminated as stop:
        return str(stop)
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
        store.engine.dispose()
    return ""
