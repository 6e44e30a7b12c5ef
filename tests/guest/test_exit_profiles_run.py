"""`virtbench run ... --profile exits` end to end under TCG (the issue's acceptance run): two
guests, dd-write, two measured trials each, then one profiled trial each in a profiling twin
booted with our plugin. The IDE guest's would-be exits are ATA/IDE port I/O, the virtio-blk
guest's the virtio notify path; `report --format json` carries them as `profiles`."""
import json
import os

import pytest

from virtbench import cli, netns
from virtbench.environments.qemu import qemu_binary
from virtbench.errors import VirtbenchError

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or qemu_binary() is None,
                                reason="guest boots need root and qemu-system-x86_64")


def test_profile_exits_explains_ide_and_virtio_blk(capsys, store_url):
    from virtbench.guest import image
    try:
        image.build()
    except VirtbenchError as exc:
        pytest.skip(f"guest image not buildable here: {exc}")
    before = set(netns.list_namespaces())
    code = cli.main(["run", "--env", "qemu:accel=tcg,disk=ide", "--env",
                     "qemu:accel=tcg,disk=virtio-blk", "--bench", "dd-write", "--trials", "2",
                     "--quick", "--profile", "exits", "--no-progress", "--seed", "5"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert cli.main(["report", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    profiles = {p["environment"]: p for p in data["profiles"]}
    assert set(profiles) == {"qemu-tcg/ide/virtio-net", "qemu-tcg/virtio-blk/virtio-net"}
    assert all(p["status"] == "ok" and p["source"] == "tcg" for p in profiles.values())
    # the measured trials are the only trials: 2 per guest
    assert all(r["n"] == 2 for r in data["results"])

    def top(label, n=5):
        return [(f["function"] or "", f["caller"] or "", f["device"] or "")
                for f in profiles[label]["by_function"][:n]]

    ide = top("qemu-tcg/ide/virtio-net")
    assert any(fn.startswith(("ata_", "ide_")) or caller.startswith(("ata_", "ide_"))
               for fn, caller, _ in ide), ide
    ide_pio = next(r for r in profiles["qemu-tcg/ide/virtio-net"]["by_reason"]
                   if r["reason"] == "pio")
    assert ide_pio["share_pct"] > 50
    virtio = top("qemu-tcg/virtio-blk/virtio-net")
    assert any("vp_notify" in fn or "vp_notify" in caller or "virtqueue_notify" in caller
               for fn, caller, _ in virtio), virtio
    # beside the APIC timer (a reason of its own), the device exits are virtio notifies
    devices = [f for f in profiles["qemu-tcg/virtio-blk/virtio-net"]["by_function"]
               if not (f["device"] or "").startswith("apic")]
    notify = sum(f["count"] for f in devices if "virtio-pci-notify" in (f["device"] or ""))
    assert notify > 0.5 * sum(f["count"] for f in devices), devices
    virtio_reasons = {r["reason"]: r["count"] for r in
                      profiles["qemu-tcg/virtio-blk/virtio-net"]["by_reason"]}
    assert virtio_reasons["pio"] == 0 and virtio_reasons["mmio"] > 0
    assert set(netns.list_namespaces()) <= before     # guests and twins are gone
