"""The physical-limit check in a real guest: an IDE scratch disk with cache=writeback, its
backing file on the host, the limit taken from the host device (not the emulated link)."""
import os

import pytest

from virtbench.measure.benchmarks import get
from virtbench.measure.benchmarks.disk import physical_limit as pl
from virtbench.measure.environments import qemu
from virtbench.measure.environments.base import EnvSpec

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or qemu.qemu_binary() is None,
    reason="guest boots need root and qemu-system-x86_64")


def test_ide_guest_dd_bounded_by_the_host_device_behind_its_image(monkeypatch):
    monkeypatch.setattr(pl, "LIMITS", pl.LimitCheck())
    asked = []

    def slow_host_device(path, run):               # stands in for a 3.3 MB/s PIO disk on the host
        asked.append(path)
        return {"disk": ["sdz"], "xfer_mode": ["XFER_PIO_0"]}

    monkeypatch.setattr(pl, "host_device_facts", slow_host_device)
    env = qemu.Qemu(EnvSpec.parse("qemu:disk=ide,cache=writeback"))
    env.resolve()
    try:
        env.start()
        backing = env.scratch_backing()
        assert backing and os.path.isfile(backing) and backing.endswith("scratch.raw")
        assert env.scratch_cache_mode() == "writeback"
        bench = get("dd-write")
        first = bench.run_trial(env, bench.params(quick=True))
        assert first.ok, first.error
        assert asked == [backing]
        [(kind, text)] = first.warnings
        assert kind == "physical-limit"
        assert "exceeds host device sdz limit (3 MB/s" in text and "(cache=writeback)" in text
        second = bench.run_trial(env, bench.params(quick=True))
        assert second.ok and second.warnings == []          # once per environment x benchmark
    finally:
        env.stop()
