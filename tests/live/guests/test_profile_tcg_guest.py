"""Would-be exits on real TCG guests: two boots with the vbexits plugin (IDE + e1000,
virtio-blk + virtio-net), each profiled around a quick dd-write and a quick tcp trial
(snapshots before and after each trial, so the boot's own I/O is left out).

Needs root, qemu-system-x86_64, gcc and the guest image (see test_qemu_boot.py).
"""
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from virtbench.measure import benchmarks
from virtbench.measure.environments import qemu
from virtbench.measure.environments.base import EnvSpec
from virtbench.core.errors import VirtbenchError
from virtbench.machinery.exits import tcg
from virtbench.machinery.exits.symbols import parse_kallsyms

# Heavy (two profiled boots, ~95 s): behind --run-slow. The default suite has the same
# IDE/virtio-blk (dd-write) and e1000/virtio-net (tcp) findings end to end through
# `run --profile exits` (test_exit_profiles_run, no extra boot for tcp).
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    os.geteuid() != 0 or qemu.qemu_binary() is None or shutil.which("gcc") is None,
    reason="guest boots need root, qemu-system-x86_64 and gcc")]

GUESTS = {"ide": "qemu:accel=tcg,disk=ide,nic=e1000",
          "virtio": "qemu:accel=tcg,disk=virtio-blk,nic=virtio-net"}
_done: dict[str, dict] = {}


def profiled(name: str) -> dict:
    """Boot the guest once (per test session), profile dd-write then tcp; return
    {"boot": Counts, "dd": Profile, "tcp": Profile, ...}."""
    if name in _done:
        return _done[name]
    from virtbench.machinery.image import guest_image as image
    try:
        image.build()
    except VirtbenchError as exc:
        pytest.skip(f"guest image not buildable here: {exc}")
    so = tcg.build_plugin()
    tcg.check_plugin(so)
    work = Path(tempfile.mkdtemp(prefix="vbexits-test-"))
    env = qemu.Qemu(EnvSpec.parse(GUESTS[name]))
    # the virtio guest also settles by itself every 2 s (autosettle), the IDE one only
    # when asked: both must still see their devices
    env.extra_argv = tcg.plugin_argv(so, work / "ctl.sock",
                                     autosettle_s=2 if name == "virtio" else 0)
    out: dict = {}
    try:
        env.start()
        control = tcg.PluginControl(work / "ctl.sock")
        kallsyms = env.exec(tcg.KALLSYMS_ARGV, timeout=120)
        assert kallsyms.exit == 0
        t0 = time.monotonic()
        table = parse_kallsyms(kallsyms.stdout)
        out["symbolise_s"] = time.monotonic() - t0
        control.settle()         # what the boot showed RAM-only loses its callback
        snaps = [control.snapshot(work / "s0")]
        for i, bench_name in enumerate(("dd-write", "tcp"), start=1):
            bench = benchmarks.get(bench_name)
            if i > 1:
                control.settle()
                snaps[-1] = control.snapshot(work / f"s{i - 1}")
            t0 = time.monotonic()
            outcome = env.run_trial(bench, bench.params(quick=True))
            took = time.monotonic() - t0
            assert not outcome.error, outcome.error
            snaps.append(control.snapshot(work / f"s{i}"))
            key = bench_name.split("-")[0]
            out[key] = tcg.to_profile(tcg.diff(snaps[-2], snaps[-1]), table, took)
            out[key + "_counts"] = tcg.diff(snaps[-2], snaps[-1])
        for key in ("dd", "tcp"):      # shown with -s: the figures behind the asserts
            print(f"{GUESTS[name]} {key}: {out[key].by_reason}")
            for row in out[key].by_function[:8]:
                print(f"  {row.count:6d} {row.function} <- {row.caller} ({row.device})")
        out["boot"] = snaps[0]
        out["stats"] = tcg.parse_stats((work / "s2").read_text())
        out["label"] = env.label
    finally:
        env.stop()
        shutil.rmtree(work, ignore_errors=True)
    _done[name] = out
    return out


def reasons(prof) -> dict[str, int]:
    return {r.reason: r.count for r in prof.by_reason}


def test_ide_dd_write_is_ata_port_io():
    p = profiled("ide")
    prof = p["dd"]
    r = reasons(prof)
    assert r["pio"] > r["mmio"], r
    top = prof.by_function[:5]
    ata = [row for row in top if (row.caller or row.function or "").startswith(("ata_", "__ata_"))
           or "[libata]" in (row.function or "") or "[ata_piix]" in (row.function or "")]
    assert ata, [(row.function, row.caller) for row in top]
    assert all(row.device == "port dx" for row in ata)
    # the profile is the trial's: the boot's own I/O (BIOS, probing) stayed out
    boot_total = sum(s.count for s in p["boot"].values())
    assert boot_total > sum(r.values())
    assert not any((row.function or "").startswith("native_calibrate") for row in prof.by_function)


def test_virtio_blk_dd_write_is_the_virtio_notify_path():
    p = profiled("virtio")
    prof = p["dd"]
    r = reasons(prof)
    assert r["pio"] < 0.05 * r["mmio"], r                  # no port I/O for virtio-blk
    notify = [row for row in prof.by_function[:5]
              if row.device == "virtio-pci-notify-virtio-blk"]
    assert notify, [(row.function, row.caller, row.device) for row in prof.by_function[:5]]
    assert notify[0].function.startswith("iowrite16+")
    assert notify[0].caller == "vp_notify [virtio_pci]"
    assert notify[0].count >= 32                          # at least one per 1 MiB O_DIRECT write


def test_e1000_takes_more_would_be_exits_than_virtio_net_under_tcp():
    """Zhang et al. Table 2: the emulated NIC's register accesses; virtio-net batches."""
    e1000 = profiled("ide")["tcp_counts"]
    vnet = profiled("virtio")["tcp_counts"]
    nic_e1000 = sum(s.count for s in e1000.values() if s.device.startswith("e1000"))
    nic_vnet = sum(s.count for s in vnet.values() if "virtio-net" in s.device)
    assert nic_e1000 > 2 * nic_vnet > 0, (nic_e1000, nic_vnet)
    top = profiled("ide")["tcp"].by_function[:5]
    assert any(row.device.startswith("e1000") for row in top), \
        [(row.function, row.caller, row.device) for row in top]


def test_symbolisation_is_quick():
    assert profiled("ide")["symbolise_s"] < 10


def test_settling_dropped_callbacks_in_both_guests():
    for name in GUESTS:
        stats = profiled(name)["stats"]
        assert stats["settles"] >= 2 and stats["learned"] > 1000, (name, stats)
    assert profiled("virtio")["stats"]["settles"] > profiled("ide")["stats"]["settles"]
