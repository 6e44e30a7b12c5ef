"""`virtbench serve`'s edges without a browser: the socket (a port in use is one line),
what counts as the loopback, a missing store (never created), a bad port."""
from __future__ import annotations

import socket

import pytest

from virtbench.interface.cli import commands as cli
from virtbench.core.errors import VirtbenchError
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
