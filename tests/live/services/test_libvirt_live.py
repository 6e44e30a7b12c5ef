"""The live part of tests/unit/environments/test_libvirt.py: its tests that need a server.

The `libvirt` kind without a daemon: its spec, its domain XML (checked by libvirt's own
schema), its one-line errors, and an existing domain's life cycle on libvirt's test driver
(one connection per environment: the driver's state lives in the connection), measured
over SSH through a private sshd on 127.0.0.1 standing for the domain's.
"""
import json
import pytest
from virtbench.interface.cli import commands as cli
from virtbench.measure.environments import create
libvirt = pytest.importorskip("libvirt")

NODE = """<node>
  <domain type='test' xmlns:test='http://libvirt.org/schemas/domain/test/1.0'>
    <name>{name}</name>
    <memory unit='MiB'>512</memory>
    <os><type arch='x86_64'>hvm</type></os>
    <test:runstate>{state}</test:runstate>
  </domain>
</node>
"""


# -- an existing domain's life cycle on the test driver ----------------------------------------
@pytest.fixture
def domain_spec(loopback_sshd, tmp_path):
    server, known = loopback_sshd

    def spec(state: int) -> str:
        node = tmp_path / f"node-{state}.xml"
        node.write_text(NODE.format(name="guest", state=state))
        return (f"libvirt:uri=test://{node},domain=guest,host=127.0.0.1,port={server.port},"
                f"key={server.identity},known_hosts={known},shutdown_timeout=5")
    return spec


def state_of(env) -> int:
    return env.dom.state()[0]


class KeepOpen:
    """The environment's connection, kept open past its stop() so that the test can still
    read the test driver's state (which lives in the connection)."""

    def __init__(self, conn):
        self.conn = conn

    def __getattr__(self, name):
        return getattr(self.conn, name)

    def close(self):
        pass


def opened(spec: str):
    env = create(spec)
    env.resolve()
    env.conn = KeepOpen(env.conn)
    return env


def test_a_domain_found_off_is_started_paused_resumed_and_left_off(domain_spec):
    env = opened(domain_spec(libvirt.VIR_DOMAIN_SHUTOFF))
    assert env.label == "libvirt-test/guest"
    env.start()
    try:
        dom = env.dom
        assert state_of(env) == libvirt.VIR_DOMAIN_RUNNING and env.found_state == "off"
        res = env.exec([env.kernel_path("pi"), "-k", "10"], timeout=60)
        assert res.exit == 0 and '"verified":true' in res.stdout
        env.pause()
        assert state_of(env) == libvirt.VIR_DOMAIN_PAUSED
        env.resume()
        assert state_of(env) == libvirt.VIR_DOMAIN_RUNNING and env.is_alive()
        meta = env.metadata()
        assert meta["libvirt_driver"] == "TEST" and meta["found_state"] == "off"
        assert "<name>guest</name>" in meta["domain_xml"]
    finally:
        conn = env.conn
        env.stop()
    assert dom.state()[0] == libvirt.VIR_DOMAIN_SHUTOFF     # as it was found
    conn.conn.close()


@pytest.mark.parametrize("found", ["running", "paused"])
def test_a_domain_is_left_as_it_was_found(domain_spec, found):
    state = {"running": libvirt.VIR_DOMAIN_RUNNING, "paused": libvirt.VIR_DOMAIN_PAUSED}[found]
    env = opened(domain_spec(state))
    env.start()
    conn = env.conn
    dom = env.dom
    assert state_of(env) == libvirt.VIR_DOMAIN_RUNNING      # a paused one runs while measured
    env.pause()                                              # stopped while another measures
    env.stop()
    assert dom.state()[0] == state
    conn.conn.close()


def test_a_domain_that_dies_mid_run_says_so(domain_spec):
    env = create(domain_spec(libvirt.VIR_DOMAIN_SHUTOFF))
    env.start()
    try:
        env.dom.destroy()
        assert not env.is_alive()
        assert env.lost_reason() == "the domain is shut off (destroyed)"
    finally:
        env.stop()


def test_a_run_of_an_existing_domain_beside_native(domain_spec, capsys, store_url):
    spec = domain_spec(libvirt.VIR_DOMAIN_SHUTOFF)
    code = cli.main(["run", "--env", "native", "--env", spec, "--bench", "pi", "--trials", "2",
                     "--quick", "--no-progress", "--seed", "1"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert cli.main(["report", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {e["label"] for e in data["environments"]} == {"native", "libvirt-test/guest"}
    rows = [r for r in data["results"] if r["environment"] == "libvirt-test/guest"]
    assert rows and rows[0]["n"] + len(rows[0]["disturbed"]) == 2 and rows[0]["n"] >= 1
