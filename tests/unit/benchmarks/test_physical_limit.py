"""The physical-limit check: device ratings from facts captured on this machine (the host's
virtio disk, a loop device, zram; IDE and AHCI scratch disks inside QEMU guests), the host
device behind a virtual disk on any bus, and one warning per environment and benchmark
naming the cache mode in use."""
import pytest

from runkit import Inert
from virtbench.measure.benchmarks import get
from virtbench.measure.benchmarks.disk.physical_limit import (
    LimitCheck,
    RatedSpeed,
    below,
    cause,
    hdparm_active_dma,
    host_device_facts,
    limit_warning,
    parse_device_facts,
    rated_speed,
    xfer_mode_mb_s,
)
from virtbench.machinery.agent.transport import ExecResult


def facts(fixture_text, name):
    return parse_device_facts(fixture_text("physical_limit", name))


# -- parsers on captured output ------------------------------------------------------------
def test_xfer_modes_as_libata_sysfs_spells_them(fixture_text):
    # captured in guests: IDE (ata_piix) runs MW DMA 2, AHCI UDMA 5, empty ports PIO_SLOW
    ide = fixture_text("physical_limit", "guest-ide-sysfs-ata.txt")
    assert "xfer_mode=XFER_MW_DMA_2" in ide
    assert xfer_mode_mb_s("XFER_MW_DMA_2") == 16.7
    assert xfer_mode_mb_s("XFER_UDMA_5") == 100.0
    assert xfer_mode_mb_s("XFER_UDMA_6") == 133.3
    assert xfer_mode_mb_s("XFER_PIO_SLOW") == 3.3
    assert xfer_mode_mb_s("XFER_PIO_4") == 16.7
    assert xfer_mode_mb_s("UDMA/133") == 133.3 and xfer_mode_mb_s("MWDMA2") == 16.7   # log form
    assert xfer_mode_mb_s("<unknown>") is None and xfer_mode_mb_s("") is None


def test_hdparm_identify_active_dma_mode(fixture_text):
    assert hdparm_active_dma(fixture_text("physical_limit", "guest-ide-hdparm-I.txt")) == "XFER_MW_DMA_2"
    assert hdparm_active_dma(fixture_text("physical_limit", "guest-ahci-hdparm-I.txt")) == "XFER_UDMA_5"
    assert hdparm_active_dma("DMA: mdma0 mdma1 udma0 udma5") is None      # nothing marked
    assert rated_speed({"disk": ["sda"], "sata_spd": ["<unknown>"],
                        "hdparm_dma": ["sdma0 mdma0 *udma5"]}).mb_s == 100.0


def test_guest_ide_and_ahci_ratings_are_their_emulated_links(fixture_text):
    ide = rated_speed(facts(fixture_text, "guest-ide-facts.txt"))
    assert ide.mb_s == 16.7 and ide.virtual and ide.device == "sda"
    assert "XFER_MW_DMA_2" in ide.source and "QEMU HARDDISK" in ide.source
    ahci = rated_speed(facts(fixture_text, "guest-ahci-facts.txt"))
    assert ahci.mb_s == 150.0 and ahci.virtual and "SATA/150" in ahci.source


def test_host_devices_of_this_machine(fixture_text):
    vda = rated_speed(facts(fixture_text, "host-image-file.txt"))
    assert vda.mb_s is None and vda.virtual and vda.device == "vda"
    loop = facts(fixture_text, "host-loop-device.txt")
    assert "stacked" in rated_speed(loop).source
    assert below(loop) == "/var/tmp/vb-pl-capture.img"
    zram = facts(fixture_text, "host-zram0.txt")
    assert below(zram) is None and rated_speed(zram).mb_s is None
    assert below({"disk": ["dm-0"], "slave": ["sda2"]}) == "/dev/sda2"
    assert rated_speed({"disk": ["nvme0n1"], "pcie_speed": ["8.0 GT/s PCIe"],
                        "pcie_width": ["4"]}).mb_s == pytest.approx(3938.4)


def test_host_device_followed_through_a_loop_device(fixture_text):
    outputs = {"/dev/loop0": fixture_text("physical_limit", "host-loop-device.txt"),
               "/var/tmp/vb-pl-capture.img": fixture_text("physical_limit", "host-image-file.txt")}
    seen = []

    def run(path):
        seen.append(path)
        return outputs[path]

    assert host_device_facts("/dev/loop0", run)["disk"] == ["vda"]
    assert seen == ["/dev/loop0", "/var/tmp/vb-pl-capture.img"]


# -- the warning ---------------------------------------------------------------------------
SDA = RatedSpeed(600.0, "sda (ST4000DM004): SATA link 6.0 Gbps (SATA/600)", False, "sda")


def test_warning_names_host_device_and_cache_mode_in_use():
    text = limit_warning({"write_mb_s": 1400.0, "read_mb_s": 500.0}, SDA, "writeback")
    assert text.startswith("write_mb_s = 1400.0 MB/s exceeds host device sda limit (600 MB/s")
    assert text.endswith("served from the host page cache (cache=writeback)")
    assert "read_mb_s" not in text
    assert limit_warning({"write_mb_s": 620.0}, SDA, "writeback") is None     # within 5 %
    assert limit_warning({"write_mb_s": 9e9}, RatedSpeed(None, "?"), "none") is None
    assert limit_warning({"write_mb_s": 9e9}, None, None) is None


def test_causes_follow_the_cache_mode():
    assert "cache=unsafe" in cause("unsafe", "out")
    assert "writes reach the device" in cause("writethrough", "out")
    assert "bypassed (cache=none)" in cause("none", "out") and "guest" not in cause("none", "out")
    assert "guest's page cache" in cause("directsync", "in")
    assert "cache=in" in cause(None, "in") and "host" not in cause(None, "out")


class FakeEnv(Inert):
    kind = "fake"

    def __init__(self, backing=None, cache=None):
        self.backing, self.cache = backing, cache

    def scratch_backing(self):
        return self.backing

    def scratch_cache_mode(self):
        return self.cache


def test_virtual_disk_on_any_bus_is_bounded_by_the_host_device_not_its_link(monkeypatch, fixture_text):
    import virtbench.measure.benchmarks.disk.physical_limit as pl
    monkeypatch.setattr(pl, "host_device_facts", lambda path, run: {"disk": ["sda"], "sata_spd": ["6.0 Gbps"]})
    check = LimitCheck()
    guest = {"ide": facts(fixture_text, "guest-ide-facts.txt"),
             "ahci": facts(fixture_text, "guest-ahci-facts.txt")}
    for bus, seen in guest.items():
        env = FakeEnv("/var/lib/vm/scratch.raw", "writeback")
        # above the emulated link (16.7 / 150 MB/s) but within the host's 600: no warning
        assert check.check(env, "dd-write", {"write_mb_s": 400.0}, "out", lambda: seen) == []
        [(kind, text)] = check.check(env, "dd-write", {"write_mb_s": 900.0}, "out", lambda: seen)
        assert kind == "physical-limit" and "host device sda limit (600 MB/s" in text, bus
        assert "(cache=writeback)" in text
        # once per environment and benchmark
        assert check.check(env, "dd-write", {"write_mb_s": 950.0}, "out", lambda: seen) == []
        assert check.check(env, "ior-rw", {"write_mb_s": 950.0}, "out", lambda: seen) != []
    # a virtual disk whose host device has no rating (this machine's virtio vda): no check
    monkeypatch.setattr(pl, "host_device_facts",
                        lambda path, run: facts(fixture_text, "host-image-file.txt"))
    assert LimitCheck().check(FakeEnv("/x.raw", "none"), "dd-write", {"write_mb_s": 9e4},
                              "out", lambda: guest["ide"]) == []
    # no backing (native, or a VM we did not start): the device it sees, unless virtual
    assert LimitCheck().check(FakeEnv(), "dd-write", {"write_mb_s": 9e4}, "out",
                              lambda: guest["ahci"]) == []
    [(_, text)] = LimitCheck().check(FakeEnv(), "dd-write", {"write_mb_s": 900.0}, "out",
                                     lambda: {"disk": ["sda"], "sata_spd": ["6.0 Gbps"]})
    assert "exceeds device sda limit" in text and "host" not in text.split(":")[0]


class ScriptedEnv(FakeEnv):
    """Runs a disk benchmark's commands: dd prints a fast result, the facts script a SATA disk."""

    label = "scripted"

    def scratch_dir(self):
        return "/scratch"

    def drop_caches(self):
        pass

    def exec(self, argv, timeout, env=None):
        if argv[0] == "dd":
            return ExecResult(0, "", "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 1.0 s, 1.1 GB/s\n", 1.0)
        if argv[:2] == ["sh", "-c"] and "findmnt" in argv[2]:
            return ExecResult(0, "source=/dev/sda\ndisk=sda\nsata_spd=3.0 Gbps\n", "", 0.1)
        return ExecResult(0, "", "", 0.0)


def test_dd_trial_warns_once_per_environment(monkeypatch):
    import virtbench.measure.benchmarks.disk.physical_limit as pl
    monkeypatch.setattr(pl, "LIMITS", LimitCheck())
    bench = get("dd-write")
    env = ScriptedEnv()
    first = bench.run_trial(env, bench.params(quick=True))
    assert first.ok, first.error
    assert [k for k, _ in first.warnings] == ["physical-limit"]
    assert "write_mb_s = 1073.7 MB/s exceeds device sda limit (300 MB/s" in first.warnings[0][1]
    second = bench.run_trial(env, bench.params(quick=True))
    assert second.ok and second.warnings == []
    other = bench.run_trial(ScriptedEnv(), bench.params(quick=True))
    assert [k for k, _ in other.warnings] == ["physical-limit"]
    # the instances of one group warn once between them
    group = ScriptedEnv()
    a, b = ScriptedEnv(), ScriptedEnv()
    a.instance_of = b.instance_of = group
    assert len(bench.run_trial(a, bench.params(quick=True)).warnings) == 1
    assert bench.run_trial(b, bench.params(quick=True)).warnings == []


class SandboxEnv(FakeEnv):
    """An environment declaring that O_DIRECT is not honoured (as gVisor does)."""

    def capabilities(self):
        from virtbench.core.capabilities import cannot
        return super().capabilities().with_(
            direct_io=cannot("environment sandbox: its sentry ignores O_DIRECT"))


def test_a_figure_where_o_direct_is_ignored_is_flagged_whatever_the_rating(monkeypatch):
    import virtbench.measure.benchmarks.disk.physical_limit as pl
    monkeypatch.setattr(pl, "host_device_facts", lambda path, run: {"disk": ["vda"]})
    check = LimitCheck()
    unrated = lambda: {"disk": ["vda"], "driver": ["virtio_blk"]}   # no rating: no limit check
    assert check.check(FakeEnv(), "cdm", {"seq1m_q8t1_read_mb_s": 9e3}, "out", unrated) == []
    env = SandboxEnv()
    [(kind, text)] = check.check(env, "cdm", {"seq1m_q8t1_read_mb_s": 9000.0}, "out", unrated)
    assert kind == "physical-limit" and "not a device speed" in text
    assert "seq1m_q8t1_read_mb_s = 9000.0 MB/s" in text and "ignores O_DIRECT" in text
    assert check.check(env, "cdm", {"seq1m_q8t1_read_mb_s": 9e3}, "out", unrated) == []  # once
    # cache=in measures the cache on purpose: nothing to flag
    assert LimitCheck().check(SandboxEnv(), "cdm", {"x_mb_s": 9e3}, "in", unrated) == []
    assert pl.cache_warning({}, "why") is None
