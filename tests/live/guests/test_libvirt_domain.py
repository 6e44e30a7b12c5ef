"""A transient domain virtbench defines through a real libvirtd (started by these tests, by
hand: no systemd here) from its own image, under TCG: it boots, measures, pauses and resumes
through libvirt, runs the quick study's kernels beside native, and leaves nothing behind,
after a stop and after the virtbench process is killed."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from libvirtd import PrivateLibvirtd

from virtbench.interface.cli import commands as cli
from virtbench.machinery.host.net import netns
from virtbench.measure.environments import create
from virtbench.measure.environments.qemu import qemu_binary

libvirt = pytest.importorskip("libvirt")
HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or qemu_binary() is None or not os.path.exists("/usr/sbin/libvirtd"),
    reason="needs root, qemu-system-x86_64 and libvirtd")


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, guest_image):
    with PrivateLibvirtd(tmp_path_factory.mktemp("libvirtd")) as d:
        yield d


def domains(uri: str) -> list[str]:
    conn = libvirt.open(uri)
    try:
        return [d.name() for d in conn.listAllDomains()]
    finally:
        conn.close()


def host_links() -> str:
    return subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout


def test_a_defined_domain_boots_measures_pauses_and_leaves_nothing(daemon):
    # with guest tunings: one at boot, one module parameter, one through the agent
    env = create(f"libvirt:uri={daemon.uri},accel=tcg,disk=ahci,nic=e1000,tick=periodic,"
                 "e1000_itr=3000,iosched=none")
    env.resolve()
    assert env.label == "libvirt-tcg/ahci/e1000/tick=periodic/iosched=none/e1000_itr=3000"
    env.start()
    try:
        name, ns, workdir = env.vmm.dom.name(), env.ns.name, env.workdir
        assert domains(daemon.uri) == [name]
        res = env.exec([env.kernel_path("pi"), "-k", "10"], timeout=120)
        assert res.exit == 0 and '"verified":true' in res.stdout
        meta = env.metadata()
        assert "ahci" in meta["guest_disk_drivers"]
        assert "e1000" in meta["guest_nic_drivers"]
        assert meta["libvirt_driver"] == "QEMU" and "<domain type='qemu'" in meta["domain_xml"]
        assert "nohz=off e1000.InterruptThrottleRate=3000</cmdline>" in meta["domain_xml"]
        assert {k: meta["tunings"][k] for k in ("tick", "iosched", "e1000_itr")} == {
            "tick": "periodic", "iosched": "none", "e1000_itr": 3000}
        tap = "vbt" + ns[len(netns.PREFIX):]
        assert tap not in host_links()                      # the tap lives in our namespace
        env.pause()
        assert env.vmm.dom.state()[0] == libvirt.VIR_DOMAIN_PAUSED
        env.resume()
        assert env.exec(["true"], timeout=30).exit == 0
        path = env.net_path()                              # guest NIC <-> tap in the namespace
        ping = subprocess.run(path.host_prefix + ["ping", "-c", "1", "-W", "5", path.env_address],
                              capture_output=True, text=True, timeout=30)
        assert ping.returncode == 0, ping.stdout + ping.stderr
    finally:
        env.stop()
    assert domains(daemon.uri) == []
    assert ns not in netns.list_namespaces() and not workdir.exists()
    assert tap not in host_links()


# 197 s of the default suite's 11 guest minutes: behind --run-slow; a defined domain's boot,
# measurement, pause and clean-up stay checked by the other tests of this module
@pytest.mark.slow
def test_a_defined_domain_runs_the_quick_studys_kernels_beside_native(daemon, capsys, store_url):
    spec = f"libvirt:uri={daemon.uri},accel=tcg"
    code = cli.main(["run", "--env", "native", "--env", spec, "--bench", "himeno",
                     "--bench", "stream", "--bench", "pi", "--trials", "3", "--quick",
                     "--no-progress", "--seed", "3"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert cli.main(["report", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    label = "libvirt-tcg/virtio-blk/virtio-net"
    assert {e["label"] for e in data["environments"]} == {"native", label}
    rows = {(r["benchmark"], r["metric"]): r for r in data["results"]
            if r["environment"] == label}
    assert {b for b, _ in rows} == {"himeno", "stream", "pi"}
    assert all(r["n"] + len(r["disturbed"]) == 3 and r["vs_baseline"] for r in rows.values())
    assert domains(daemon.uri) == []


def test_a_killed_virtbench_leaves_no_domain_behind(daemon):
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, f"libvirt:uri={daemon.uri},accel=tcg"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, PYTHONPATH=str(HERE.parents[2])))
    try:
        line = child.stdout.readline()
        assert line, child.stderr.read()[-2000:]
        info = json.loads(line)
        assert info["domain"] in domains(daemon.uri)
        child.send_signal(signal.SIGKILL)           # no stop(): the guardian cleans up
        child.wait(timeout=30)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (info["domain"] in domains(daemon.uri)
                                               or info["netns"] in netns.list_namespaces()):
            time.sleep(0.5)
        assert info["domain"] not in domains(daemon.uri)
        assert info["netns"] not in netns.list_namespaces()
        assert not os.path.exists(info["workdir"])
    finally:
        if child.poll() is None:
            child.kill()


CHILD = """
import json, sys, time
from virtbench.measure.environments import create
env = create(sys.argv[1])
env.start()
print(json.dumps({"domain": env.vmm.dom.name(), "netns": env.ns.name,
                  "workdir": str(env.workdir)}), flush=True)
time.sleep(600)
"""
