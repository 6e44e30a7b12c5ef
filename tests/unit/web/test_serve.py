"""`virtbench serve`'s edges without a browser: the socket (a port in use is one line),
what counts as the loopback, a missing store (never created), a bad port, SIGTERM (one line,
exit 0)."""
from __future__ import annotations

import os
import signal
import socket
import threading
import urllib.request

import pytest

from virtbench.interface.cli import commands as cli
from virtbench.core.errors import VirtbenchError
from virtbench.foundations.store import Store
from virtbench.interface.web import serve


@pytest.mark.parametrize("host, loopback", [("127.0.0.1", True), ("127.0.0.2", True),
                                            ("::1", True), ("localhost", True),
                                            ("0.0.0.0", False), ("192.168.1.4", False),
                                            ("::", False), ("example.org", False)])
def test_is_loopback(host, loopback):
    assert serve.is_loopback(host) is loopback


def test_bind_takes_a_free_port_and_refuses_one_in_use():
    sock = serve.bind("127.0.0.1", 0)
    try:
        port = sock.getsockname()[1]
        assert port > 0 and serve.url_of(sock) == f"http://127.0.0.1:{port}/"
        with pytest.raises(VirtbenchError, match=f"--port {port}: cannot listen there"):
            serve.bind("127.0.0.1", port)
    finally:
        sock.close()


def test_an_unknown_host_is_one_line():
    with pytest.raises(VirtbenchError, match="--host no.such.host.invalid: not an address"):
        serve.bind("no.such.host.invalid", 0)


def test_a_missing_store_is_one_line_and_never_created(capsys, tmp_path):
    where = tmp_path / "none" / "store.db"
    code = cli.main(["serve", "--store", f"sqlite:///{where}", "--port", "0"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "no store at" in err
    assert len(err.strip().splitlines()) == 1 and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("port", ["65536", "-1", "http"])
def test_a_bad_port_is_one_line(capsys, port):
    code = cli.main(["serve", "--port", port])
    _, err = capsys.readouterr()
    assert code == 2 and "is not a port" in err


class _SigtermNotTaken(Exception):
    """The test's own SIGTERM handler ran: serve did not take the signal."""


@pytest.fixture
def sigterm_guard():
    """A SIGTERM handler of the test's while it runs: if serve does not take the signal,
    the test fails with _SigtermNotTaken instead of the test process being killed."""

    def handler(signum, frame):
        raise _SigtermNotTaken("SIGTERM reached the handler serve found, not serve's")
    before = signal.signal(signal.SIGTERM, handler)
    yield handler
    signal.signal(signal.SIGTERM, before)


def test_sigterm_stops_it_in_one_line_and_exit_0(tmp_path, capsys, monkeypatch, sigterm_guard):
    """SIGTERM while serving: uvicorn stops, then raises SIGTERM again with the handler it
    found, serve's, which ends the command with one line and exit 0 (not 143, nothing said).
    The signal is sent once a page has been served; the handler before is put back."""

    url = f"sqlite:///{tmp_path / 'store.db'}"
    Store(url).engine.dispose()
    bind, served = serve.bind, []

    def bind_then_kill(host, port):
        sock = bind(host, port)
        address = serve.url_of(sock)

        def kill_once_served():
            for _ in range(200):
                try:
                    served.append(urllib.request.urlopen(address + "runs", timeout=5).status)
                    break
                except OSError:
                    threading.Event().wait(0.05)
            os.kill(os.getpid(), signal.SIGTERM)
        threading.Thread(target=kill_once_served, daemon=True).start()
        return sock

    monkeypatch.setattr(serve, "bind", bind_then_kill)
    before = signal.getsignal(signal.SIGTERM)
    code = cli.main(["serve", "--store", url, "--port", "0"])
    _, err = capsys.readouterr()
    assert served == [200]
    assert code == 0 and err.splitlines()[-1] == "virtbench serve: stopped (SIGTERM)"
    assert "Traceback" not in err and len(err.splitlines()) == 2    # the address, the stop
    assert signal.getsignal(signal.SIGTERM) is before is sigterm_guard


def test_sigterm_before_uvicorn_runs_stops_it_too(tmp_path, monkeypatch, sigterm_guard):
    """SIGTERM in the moment between binding and uvicorn's own handlers: serve's handler
    takes it, and serve returns the same way."""

    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = Store(url, read_only=False)
    monkeypatch.setattr(serve, "url_of", lambda sock: os.kill(os.getpid(), signal.SIGTERM))
    assert serve.serve(store, "127.0.0.1", 0, say=lambda line: None,
                       warn=lambda line: None) == "SIGTERM"
