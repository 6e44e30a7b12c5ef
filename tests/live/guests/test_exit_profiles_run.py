"""`virtbench run ... --profile exits` end to end under TCG (the issue's acceptance run): two
guests, IDE + e1000 and virtio-blk + virtio-net, dd-write and a short tcp, two measured trials
each, then one profiled trial per guest x benchmark in a profiling twin booted with our plugin
(one twin per guest serves both benchmarks). The IDE guest's would-be exits under dd-write
are ATA/IDE port I/O, the virtio-blk guest's the virtio notify path; under tcp the e1000
guest's are the e1000 driver's register accesses, the virtio-net guest's its notifies
(Zhang et al. Table 2). `report --format json` carries them as `profiles`.

One run serves every test here (4 boots, about two minutes under TCG); the slower
per-phase checks (settling, symbolisation) are in test_profile_tcg_guest.py (--run-slow)."""
import json
import os
import subprocess
import sys
import warnings

import prebuild
import pytest

from virtbench.machinery.host.net import netns
from virtbench.measure.environments.qemu import qemu_binary

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or qemu_binary() is None,
                                reason="guest boots need root and qemu-system-x86_64")

IDE = "qemu-tcg/ide/e1000"
VIRTIO = "qemu-tcg/virtio-blk/virtio-net"


def namespaces_of(pid: int, names: set[str]) -> set[str]:
    """Those of `names` that the process `pid` made (its owner record, written before the
    namespace and removed after it), or whose record is gone: what another virtbench running
    beside the tests made is not this run's."""
    mine = set()
    for name in names:
        try:
            owner = (netns.OWNERS / name).read_text().split()
        except OSError:
            owner = []
        if not owner or owner[0] == str(pid):
            mine.add(name)
    return mine


@pytest.fixture(scope="module")
def report(tmp_path_factory, guest_image):
    """The run's `report --format json`, with the namespaces this run left (none, we hope)."""
    for said in prebuild.wait_all():    # its plugin's trials lost their agent beside a build
        print(said, flush=True)
    store = tmp_path_factory.mktemp("profiles") / "store.db"
    env = dict(os.environ, VIRTBENCH_STORE=f"sqlite:///{store}")
    before = set(netns.list_namespaces())
    proc = subprocess.Popen(
        [sys.executable, "-m", "virtbench.interface.cli.commands", "run", "--env",
         "qemu:accel=tcg,disk=ide,nic=e1000",
         "--env", "qemu:accel=tcg,disk=virtio-blk,nic=virtio-net", "--bench", "dd-write",
         "--bench", "tcp", "--trials", "1", "--quick", "--min-section", "0", "--profile", "exits",
         "--no-progress", "--seed", "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=env)
    _, stderr = proc.communicate(timeout=900)
    assert proc.returncode == 0, stderr[-3000:]
    left = namespaces_of(proc.pid, set(netns.list_namespaces()) - before)
    out = subprocess.run([sys.executable, "-m", "virtbench.interface.cli.commands", "report", "--format", "json"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    data["_namespaces_left"] = left
    for p in data["profiles"]:          # a retried profiled trial passes, but is said
        for note in p.get("notes") or []:
            if note.startswith("the first profiled trial failed"):
                warnings.warn(f"{p['environment']} · {p['benchmark']}: {note}")
    return data


def profile(data, env: str, bench: str) -> dict:
    [p] = [p for p in data["profiles"] if p["environment"] == env and p["benchmark"] == bench]
    return p


def top(p, n=5):
    return [(f["function"] or "", f["caller"] or "", f["device"] or "")
            for f in p["by_function"][:n]]


def test_every_profile_was_taken_and_the_measured_trials_are_the_only_trials(report):
    assert {(p["environment"], p["benchmark"]) for p in report["profiles"]} == {
        (IDE, "dd-write"), (IDE, "tcp"), (VIRTIO, "dd-write"), (VIRTIO, "tcp")}
    taken = [(p["environment"], p["benchmark"], p["status"], p["source"], p["error"])
             for p in report["profiles"]]
    assert all(status == "ok" and source == "tcg" for _, _, status, source, _ in taken), taken
    assert report["results"] and all(r["n"] + len(r["disturbed"]) == 1
                                      for r in report["results"])
    assert report["_namespaces_left"] == set()        # guests and twins are gone


def test_dd_write_is_ide_port_io_on_ide_and_virtio_notifies_on_virtio_blk(report):
    ide = profile(report, IDE, "dd-write")
    assert any(fn.startswith(("ata_", "ide_")) or caller.startswith(("ata_", "ide_"))
               for fn, caller, _ in top(ide)), top(ide)
    ide_pio = next(r for r in ide["by_reason"] if r["reason"] == "pio")
    assert ide_pio["share_pct"] > 50
    virtio = profile(report, VIRTIO, "dd-write")
    assert any("vp_notify" in fn or "vp_notify" in caller or "virtqueue_notify" in caller
               for fn, caller, _ in top(virtio)), top(virtio)
    # beside the APIC timer (a reason of its own), the device exits are virtio notifies
    devices = [f for f in virtio["by_function"] if not (f["device"] or "").startswith("apic")]
    notify = sum(f["count"] for f in devices if "virtio-pci-notify" in (f["device"] or ""))
    assert notify > 0.5 * sum(f["count"] for f in devices), devices
    reasons = {r["reason"]: r["count"] for r in virtio["by_reason"]}
    assert reasons["pio"] == 0 and reasons["mmio"] > 0


def test_tcp_is_e1000_register_access_on_e1000_and_virtio_notifies_on_virtio_net(report):
    """The fast variant of test_profile_tcg_guest's e1000 / virtio-net comparison: the top of
    each tcp profile names the NIC's own driver and device."""
    e1000 = profile(report, IDE, "tcp")
    nic = [(fn, caller, dev) for fn, caller, dev in top(e1000) if dev.startswith("e1000")]
    assert nic, top(e1000)
    assert any(fn.startswith("e1000_") or caller.startswith("e1000_") for fn, caller, _ in nic), nic
    vnet = profile(report, VIRTIO, "tcp")
    notify = [(fn, caller, dev) for fn, caller, dev in top(vnet)
              if "virtio-pci-notify" in dev and "virtio-net" in dev]
    assert notify and any(caller.startswith("vp_notify") for _, caller, _ in notify), top(vnet)

    def nic_count(p, match) -> int:
        return sum(f["count"] for f in p["by_function"] if match(f["device"] or ""))
    # the emulated NIC takes more would-be exits than virtio-net's batched notifies
    assert nic_count(e1000, lambda d: d.startswith("e1000")) > \
        2 * nic_count(vnet, lambda d: "virtio-net" in d) > 0
