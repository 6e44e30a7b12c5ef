"""Symbolisation with a guest's /proc/kallsyms (a real one, captured from a virtbench guest:
see the fixture's header)."""
from pathlib import Path

import pytest

from virtbench.core.errors import VirtbenchError
from virtbench.machinery.exits.symbols import caller_of, is_accessor, parse_kallsyms

KALLSYMS = Path(__file__).resolve().parents[2] / "fixtures" / "profile" / "kallsyms-6.1-ide.txt"


@pytest.fixture(scope="module")
def table():
    return parse_kallsyms(KALLSYMS.read_text())


def test_core_and_module_text_symbols_are_read(table):
    assert len(table) > 4000
    io = table.lookup(0xffffffff8153eaa0)
    assert (io.name, io.offset, io.module) == ("ioread8", 0, None)
    ata = table.lookup(0xffffffffc02c9970 + 0x1c)
    assert str(ata) == "ata_sff_check_status+0x1c [libata]"


def test_an_address_inside_a_function_gets_its_offset(table):
    assert table.function(0xffffffff8153eab4) == "ioread8+0x14"
    assert table.function(0xffffffff8153ee29) == "iowrite16+0x9"
    assert table.function(0xffffffffc021f070 + 0x17) == "vp_notify+0x17 [virtio_pci]"


def test_addresses_outside_the_text_are_unknown(table):
    assert table.lookup(0x1000) is None
    assert table.lookup(0xffffffffffff0000) is None       # far past the last symbol


def test_data_symbols_and_zero_addresses_are_left_out():
    t = parse_kallsyms("ffffffff81000000 T _text\nffffffff81000100 D some_data\n"
                       "ffffffff81000200 t helper\n0000000000000000 A fixed_percpu_data\n")
    assert [s.name for s in t.symbols] == ["_text", "helper"]
    assert t.function(0xffffffff81000150) == "_text+0x150"     # the data symbol is skipped


def test_hidden_addresses_say_how_to_read_them():
    with pytest.raises(VirtbenchError, match="kptr_restrict"):
        parse_kallsyms("0000000000000000 T _text\n0000000000000000 t ioread8\n")


@pytest.mark.parametrize("text", ["", "hello world\n", "zzzz T _text\n"])
def test_not_kallsyms_is_one_line(text):
    with pytest.raises(VirtbenchError) as exc:
        parse_kallsyms(text)
    assert "\n" not in str(exc.value) and "kallsyms" in str(exc.value)


@pytest.mark.parametrize("name", ["ioread8", "iowrite16", "ioread32", "ioread16_rep",
                                  "iowrite32_rep", "iowrite32be", "__iowrite32_copy",
                                  "acpi_os_read_port", "native_io_delay", "memcpy_fromio",
                                  "native_apic_mem_write"])
def test_generic_accessors(name):
    assert is_accessor(name)


@pytest.mark.parametrize("name", ["vp_notify", "ata_sff_check_status", "ata_bmdma_setup",
                                  "e1000_update_stats", "iowrite16_foo", "virtqueue_notify",
                                  None, ""])
def test_not_accessors(name):
    assert not is_accessor(name)


IOWRITE16 = 0xffffffff8153ee20
VP_NOTIFY = 0xffffffffc021f070
IOREAD8 = 0xffffffff8153eaa0
ATA_CHECK = 0xffffffffc02c9970


def test_the_caller_of_an_accessor_is_the_first_other_function_in_the_ring(table):
    ring = (IOWRITE16 + 0x4, VP_NOTIFY + 0x10, 0xffffffffc02070d0)
    assert caller_of(table, IOWRITE16 + 0x9, ring) == "vp_notify [virtio_pci]"


def test_other_accessors_and_unknown_pcs_in_the_ring_are_skipped(table):
    ring = (0, 0x1000, IOREAD8 + 0x2, ATA_CHECK + 0x8)
    assert caller_of(table, IOWRITE16 + 0x9, ring) == "ata_sff_check_status [libata]"


def test_no_caller_for_a_non_accessor_or_an_empty_ring(table):
    assert caller_of(table, ATA_CHECK + 0x1c, (VP_NOTIFY,)) is None
    assert caller_of(table, IOWRITE16 + 0x9, ()) is None
    assert caller_of(table, IOWRITE16 + 0x9, (IOWRITE16, 0)) is None


def test_function_and_caller_for_a_kvm_rip_and_a_tcg_ring(table):
    from virtbench.machinery.exits.symbols import function_and_caller
    assert function_and_caller(table, IOWRITE16 + 0x9) == ("iowrite16+0x9", None)
    assert function_and_caller(table, IOWRITE16 + 0x9, (VP_NOTIFY + 0x10,)) == \
        ("iowrite16+0x9", "vp_notify [virtio_pci]")
    assert function_and_caller(table, 0x1000) is None


def test_a_kvm_rip_in_user_space_is_said_to_be_there(table):
    # kallsyms names the kernel only; a 64-bit Linux guest's lower half is its programs'
    from virtbench.machinery.exits.symbols import USER_SPACE, function_or_user_space
    assert function_or_user_space(table, 0x424050) == (USER_SPACE, None)
    assert function_or_user_space(table, 0x7ffd12345678) == (USER_SPACE, None)
    assert function_or_user_space(table, IOWRITE16 + 0x9) == ("iowrite16+0x9", None)
    assert function_or_user_space(table, 0xffffffffffff0000) is None     # kernel half, unknown
