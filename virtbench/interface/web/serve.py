"""`virtbench serve`: the web view over a store, read-only, on 127.0.0.1 by default.

The socket is bound here before uvicorn starts, so a port in use or an address that is not
this host's is one line (exit 2), and `--port 0` takes a free port and says which. Binding
anywhere but the loopback prints one line: the view has no authentication. Ctrl-C (or
SIGTERM) stops uvicorn, which finishes the requests in flight; then the store is closed."""
from __future__ import annotations

import ipaddress
import socket

from ...core.errors import VirtbenchError

LOOPBACK = ("localhost",)


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


def serve(store, host: str, port: int, say, warn) -> None:
    """Serve `store` (opened read-only) until Ctrl-C; `say` and `warn` print one line each
    (the address; the warning when not on the loopback)."""
    try:
        import uvicorn
        from .app import make_app
    except ImportError as exc:
        raise VirtbenchError(f"virtbench serve needs {exc.name}: install the web extra "
                             "(pip install 'virtbench[web]')") from None
    sock = bind(host, port)
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
    finally:
        sock.close()
        store.engine.dispose()
