"""qemu:binary= (environments/qemu/vmm/binary.py): the label rule, QMP's query-version on real
replies, and a qemu environment with another QEMU: its version, label, metadata, argv."""
import json
from pathlib import Path

import pytest
from fetchedkit import fake_fetched

from virtbench.core.errors import VirtbenchError
from virtbench.measure.environments import create
from virtbench.measure.environments.base import EnvSpec
from virtbench.measure.environments.qemu.vmm import binary, version
from virtbench.measure.environments.qemu.cmdline.argv import build_argv

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "qemu_version"


def test_label_rule():
    assert binary.label_kind("qemu", "7.2.22", system=True) == "qemu"
    assert binary.label_kind("qemu", "10.0.2", system=False) == "qemu(10.0.2)"


@pytest.mark.parametrize("name,expected", [("qmp-query-version-7.2.22.jsonl", "7.2.22"),
                                           ("qmp-query-version-10.0.2.jsonl", "10.0.2")])
def test_query_version_from_real_qmp(name, expected):
    replies = [json.loads(line) for line in (FIX / name).read_text().splitlines()]
    answer = [r["return"] for r in replies if r.get("return")][0]
    assert version.parse_qmp_version(answer) == expected


def test_query_version_of_something_else():
    assert version.parse_qmp_version({}) is None
    assert version.parse_qmp_version(None) is None


def _fake_qemu(root: Path, ver: str = "10.0.2") -> Path:
    for d in ("usr/bin", "usr/share/qemu", "usr/lib/x86_64-linux-gnu/qemu"):
        (root / d).mkdir(parents=True)
    b = root / "usr/bin/qemu-system-x86_64"
    b.write_text(f"#!/bin/sh\necho 'QEMU emulator version {ver} (fake)'\n")
    b.chmod(0o755)
    return b


def test_another_qemu_in_label_metadata_and_argv(tmp_path):
    b = _fake_qemu(tmp_path / "q", "10.0.2")
    env = create(EnvSpec.parse(f"qemu:binary={b},accel=tcg"))
    assert env.label == "qemu(10.0.2)-tcg/virtio-blk/virtio-net"
    facts = env.qemu.facts()
    assert facts["qemu_version"] == "10.0.2" and facts["qemu_binary"] == str(b)
    assert facts["qemu_module_dir"] == str(tmp_path / "q/usr/lib/x86_64-linux-gnu/qemu")
    assert env.qemu.env() == {"QEMU_MODULE_DIR": facts["qemu_module_dir"]}
    argv = build_argv({"qemu": env.qemu.path, "data_argv": env.qemu.data_argv(),
                       "name": "g", "machine": "q35", "accel": "tcg", "cpu": "max", "vcpus": 1,
                       "mem": "1G", "linux": "/k", "initrd": "/i", "root_image": "/r",
                       "root_label": "vbroot", "scratch": "/s", "scratch_format": "raw",
                       "cache": "none", "aio": "threads", "disk": "virtio-blk",
                       "nic": "virtio-net", "mac": "52:54:00:00:00:01",
                       "guest_addr": "10.0.0.2/24", "tap": None, "console_log": "/c",
                       "agent_socket": "/a", "qmp_socket": "/q", "pidfile": "/p"})
    assert argv[:3] == [str(b), "-L", str(tmp_path / "q/usr/share/qemu")]


def test_two_binaries_two_versions(tmp_path):
    a = create(EnvSpec.parse(f"qemu:binary={_fake_qemu(tmp_path / 'a', '9.1.0')}"))
    b = create(EnvSpec.parse(f"qemu:binary={_fake_qemu(tmp_path / 'b', '10.0.2')}"))
    assert (a.qemu.version()[0], b.qemu.version()[0]) == ("9.1.0", "10.0.2")


def test_name_is_the_label(tmp_path):
    b = _fake_qemu(tmp_path / "q")
    assert create(EnvSpec.parse(f"qemu:binary={b},name=q10")).label == "q10"


def test_the_system_qemu_keeps_its_label():
    env = create(EnvSpec.parse("qemu:accel=tcg"))
    assert env.qemu.system and env.label == "qemu-tcg/virtio-blk/virtio-net"


def test_a_binary_that_is_not_qemu_is_one_line(tmp_path):
    b = _fake_qemu(tmp_path / "q")
    b.write_text("#!/bin/sh\necho 'not qemu' >&2\nexit 1\n")
    with pytest.raises(VirtbenchError, match=r"binary=.* does not start .*not qemu.*name a "
                                             r"working qemu-system-x86_64"):
        create(EnvSpec.parse(f"qemu:binary={b}"))


def test_datadir_needs_binary(tmp_path):
    with pytest.raises(VirtbenchError, match="datadir= is for another QEMU; give binary="):
        create(EnvSpec.parse(f"qemu:datadir={tmp_path}"))


def test_libvirt_does_not_take_binary(tmp_path):
    with pytest.raises(VirtbenchError, match="binary"):
        create(EnvSpec.parse(f"libvirt:uri=qemu:///system,binary={tmp_path}"))


# -- binary=fetched:SUITE: a fetched QEMU named by its suite (study files) --------------------

def test_fetched_suite_names_the_cached_qemu(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTBENCH_CACHE", str(tmp_path / "cache"))
    b = fake_fetched(tmp_path / "cache", "bookworm-backports", "10.0.2")
    env = create(EnvSpec.parse("qemu:binary=fetched:bookworm-backports,accel=tcg"))
    assert env.label == "qemu(10.0.2)-tcg/virtio-blk/virtio-net"
    facts = env.qemu.facts()
    assert facts["qemu_binary"] == str(b) and facts["qemu_version"] == "10.0.2"
    assert facts["qemu_fetched_suite"] == "bookworm-backports"
    assert facts["qemu_data_dirs"] == [str(b.parent.parent / "share/qemu")]


def test_fetched_suite_not_in_the_cache_names_the_fetch(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTBENCH_CACHE", str(tmp_path / "cache"))
    with pytest.raises(VirtbenchError, match=r"^environment qemu: binary=fetched:trixie: "
                       r"virtbench's cache holds no QEMU of trixie .*run `virtbench qemu "
                       r"fetch trixie` first$"):
        create(EnvSpec.parse("qemu:binary=fetched:trixie"))


def test_fetched_qemu_that_no_longer_checks_out_is_refused(tmp_path, monkeypatch):
    """A .deb changed after the fetch (its sha256 no longer info.json's): not run."""
    monkeypatch.setenv("VIRTBENCH_CACHE", str(tmp_path / "cache"))
    b = fake_fetched(tmp_path / "cache")
    next((b.parents[3] / "debs").glob("*.deb")).write_bytes(b"tampered")
    with pytest.raises(VirtbenchError, match="run `virtbench qemu fetch bookworm-backports`"):
        create(EnvSpec.parse("qemu:binary=fetched:bookworm-backports"))


def test_fetched_cache_writable_by_others_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTBENCH_CACHE", str(tmp_path / "cache"))
    b = fake_fetched(tmp_path / "cache")
    b.parents[3].chmod(0o777)           # CACHE/qemu/SUITE
    with pytest.raises(VirtbenchError, match="holds no QEMU of bookworm-backports"):
        create(EnvSpec.parse("qemu:binary=fetched:bookworm-backports"))


@pytest.mark.parametrize("given", ["fetched:", "fetched:../etc", "fetched:/usr/bin/qemu",
                                   "fetched:Trixie"])
def test_fetched_needs_a_suite_name(given, tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTBENCH_CACHE", str(tmp_path / "cache"))
    with pytest.raises(VirtbenchError, match=r"is not a Debian suite name; write e\.g\. "
                                             r"binary=fetched:bookworm-backports"):
        create(EnvSpec.parse(f"qemu:binary={given}"))
    assert not (tmp_path / "cache").exists()       # refused before the cache is looked at
