"""Dumps of the vbexits plugin -> counts -> an ExitProfile (pure), on two real snapshots taken
before and after a dd-write on an IDE guest, with that boot's /proc/kallsyms."""
from pathlib import Path

import pytest

from virtbench.core.errors import VirtbenchError
from virtbench.machinery.exits import tcg
from virtbench.machinery.exits.exit_profile import ExitProfile
from virtbench.machinery.exits.symbols import parse_kallsyms

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "profile"


def dump(name: str) -> str:
    """A captured dump without the '#' header this repository added to it."""
    text = (FIX / name).read_text()
    return "".join(ln for ln in text.splitlines(keepends=True) if not ln.startswith("#"))


@pytest.fixture(scope="module")
def before():
    return tcg.parse(dump("vbexits-ide-before.txt"))


@pytest.fixture(scope="module")
def after():
    return tcg.parse(dump("vbexits-ide-after.txt"))


@pytest.fixture(scope="module")
def table():
    return parse_kallsyms((FIX / "kallsyms-6.1-ide.txt").read_text())


def test_parse_a_real_dump(after):
    assert len(after) > 100
    iowrite8 = after[("pio", 0xffffffff8153edde, "port dx")]
    assert iowrite8.count > 1000
    assert sum(iowrite8.rings.values()) + iowrite8.ring_other == iowrite8.count
    assert all(len(r) == 4 for r in iowrite8.rings)         # the header says depth=4
    kinds = {k for k, _, _ in after}
    assert kinds == {"pio", "mmio"}
    assert any(dev.startswith("virtio-pci-notify") for _, _, dev in after)


def test_parse_keeps_device_names_with_spaces():
    c = tcg.parse("vbexits 1 depth=2\nsite mmio 0x10 3 some device name\nring 3 0x1 0x0\n"
                  "end 1\n")
    assert c[("mmio", 0x10, "some device name")].rings == {(1, 0): 3}


@pytest.mark.parametrize("text,what", [
    ("", "not a vbexits dump"),
    ("hello\n", "not a vbexits dump"),
    ("vbexits 1 depth=2\nsite pio 0x10 3 port dx\n", "truncated"),
    ("vbexits 1 depth=2\nsite pio zz 3 port dx\nend 1\n", "line 2 is malformed"),
    ("vbexits 1 depth=2\nsite io 0x10 3 port dx\nend 1\n", "line 2 is malformed"),
    ("vbexits 1 depth=2\nring 3 0x1 0x2\nend 0\n", "line 2 is malformed"),
    ("vbexits 1 depth=2\nsite pio 0x10 3 port dx\nend 2\n", "malformed"),
    ("vbexits 1 depth=2\nsite pio 0x10 3 port dx\nring 3 0x1\nend 1\n", "line 3 is malformed"),
    ("vbexits 2 depth=2\nend 0\n", "not a vbexits dump"),
])
def test_bad_dumps_are_one_line(text, what):
    with pytest.raises(VirtbenchError, match=what) as exc:
        tcg.parse(text)
    assert "\n" not in str(exc.value)


def test_diff_takes_the_boot_out(before, after):
    d = tcg.diff(before, after)
    assert 0 < len(d) < len(after)
    total = sum(s.count for s in d.values())
    assert total == sum(s.count for s in after.values()) - sum(s.count for s in before.values())
    for key, site in d.items():
        assert site.count > 0
        assert site.count == after[key].count - (before[key].count if key in before else 0)
        assert sum(site.rings.values()) + site.ring_other == site.count


def test_diff_rings_and_new_sites():
    a = tcg.parse("vbexits 1 depth=2\nsite pio 0x10 5 port dx\nring 2 0x1 0x2\nring 3 0x3 0x4\n"
                  "site mmio 0x20 1 hpet\nring 1 0x5 0x6\nend 2\n")
    b = tcg.parse("vbexits 1 depth=2\nsite pio 0x10 2 port dx\nring 2 0x1 0x2\nend 1\n")
    d = tcg.diff(b, a)
    assert d[("pio", 0x10, "port dx")].rings == {(3, 4): 3}
    assert d[("mmio", 0x20, "hpet")].count == 1
    assert tcg.diff(a, a) == {}


def test_diff_the_wrong_way_round_is_one_line(before, after):
    with pytest.raises(VirtbenchError, match="same QEMU, before first"):
        tcg.diff(after, before)


def test_profile_of_dd_write_on_ide(before, after, table):
    prof = tcg.to_profile(tcg.diff(before, after), table, 1.10, top=10)
    assert isinstance(prof, ExitProfile) and prof.source == "tcg"
    reasons = {r.reason: r for r in prof.by_reason}
    assert set(reasons) == {"pio", "mmio", "apic"}
    assert reasons["pio"].count > reasons["mmio"].count + reasons["apic"].count
    apic_rows = [r for r in tcg.to_profile(tcg.diff(before, after), table, 1.1, top=500)
                 .by_function if r.device and r.device.startswith("apic")]
    assert reasons["apic"].count == sum(r.count for r in apic_rows) > 0
    assert abs(sum(r.share_pct for r in prof.by_reason) - 100) < 0.1
    rows = prof.by_function
    assert len(rows) == 10
    assert [r.count for r in rows] == sorted((r.count for r in rows), reverse=True)
    # IDE port I/O from libata dominates, through the generic accessors, callers named
    top = rows[0]
    assert top.function.startswith("iowrite8+") and top.caller == "ata_sff_tf_load [libata]"
    assert top.device == "port dx" and top.address == "0xffffffff8153edde"
    ata = [r for r in rows if (r.caller or "").startswith(("ata_", "__ata_"))]
    assert sum(r.count for r in ata) > 0.5 * sum(r.count for r in rows)
    # the local APIC is the MMIO side: the timer (Zhang et al. Table 1), through the
    # retpoline thunk of apic->write(), which is never named the caller
    apic = {r.caller: r for r in rows if r.device == "apic-msi"}
    assert {"lapic_next_event", "__sysvec_apic_timer_interrupt"} <= set(apic)
    assert all(r.function.startswith("native_apic_mem_write+") for r in apic.values())
    assert not any(r.caller and "thunk" in r.caller for r in prof.by_function)
    # a non-accessor keeps no caller
    plain = tcg.to_profile(tcg.diff(before, after), table, 1.10, top=100).by_function
    hpet = [r for r in plain if r.function and r.function.startswith("read_hpet")]
    assert hpet and all(r.caller is None for r in hpet)
    total = sum(r.count for r in prof.by_reason)
    assert rows[0].share_pct == round(100 * rows[0].count / total, 2)
    assert any("more guest sites" in n for n in prof.notes)
    assert ExitProfile.from_json(prof.to_json()) == prof


def test_profile_accepts_kallsyms_text_and_symbolises_the_same(before, after, table):
    d = tcg.diff(before, after)
    a = tcg.to_profile(d, (FIX / "kallsyms-6.1-ide.txt").read_text(), 1.0)
    b = tcg.to_profile(d, table, 1.0)
    assert a == b


def test_an_empty_profile():
    prof = tcg.to_profile({}, "ffffffff81000000 T _text\n", 2.0)
    assert [(r.reason, r.count, r.share_pct) for r in prof.by_reason] == \
        [("pio", 0, 0.0), ("mmio", 0, 0.0), ("apic", 0, 0.0)]
    assert prof.by_function == []


def test_accessor_events_split_by_caller_and_unattributed_ones_stay_apart(table):
    iowrite16 = 0xffffffff8153ee29
    vp_notify = 0xffffffffc021f070 + 0x10
    counts = tcg.parse(
        "vbexits 1 depth=2\n"
        f"site mmio {iowrite16:#x} 10 virtio-pci-notify-virtio-blk\n"
        f"ring 6 {vp_notify:#x} 0x0\n"
        "ring 1 0x0 0x0\n"
        "ring-other 3\nend 1\n")
    prof = tcg.to_profile(counts, table, 1.0)
    got = {(r.caller, r.count) for r in prof.by_function}
    assert got == {("vp_notify [virtio_pci]", 6), (None, 4)}
    assert {r.function for r in prof.by_function} == {"iowrite16+0x9"}
