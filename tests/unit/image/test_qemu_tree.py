"""Another QEMU's tree (image/qemu_tree.py): its version from real `-version` outputs, its
data and modules directories from its prefix, and the checks before it may run as root."""
import os
from pathlib import Path

import pytest

from virtbench.core.errors import VirtbenchError
from virtbench.machinery.image import qemu_tree

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "qemu_version"


@pytest.mark.parametrize("name,expected", [("version-7.2.22.txt", "7.2.22"),
                                           ("version-10.0.2.txt", "10.0.2")])
def test_version_from_real_outputs(name, expected):
    assert qemu_tree.parse_version((FIX / name).read_text()) == expected


def test_version_of_something_else_is_none():
    assert qemu_tree.parse_version("bash: qemu: command not found") is None


def test_data_dirs_follow_debian_search_order_and_skip_missing():
    prefix = Path("/opt/q/usr")
    present = {prefix / "share/qemu", prefix / "lib/ipxe/qemu"}
    assert qemu_tree.data_dirs(prefix, present.__contains__) == [
        prefix / "share/qemu", prefix / "lib/ipxe/qemu"]
    assert qemu_tree.data_dirs(prefix, lambda p: False) == []


def test_module_dir_is_the_first_that_exists():
    prefix = Path("/opt/q/usr")
    both = {prefix / "lib/x86_64-linux-gnu/qemu", prefix / "lib/qemu"}
    assert qemu_tree.module_dir(prefix, both.__contains__) == prefix / "lib/x86_64-linux-gnu/qemu"
    assert qemu_tree.module_dir(prefix, {prefix / "lib/qemu"}.__contains__) == prefix / "lib/qemu"
    assert qemu_tree.module_dir(prefix, lambda p: False) is None


def test_prefix_of_a_binary():
    assert qemu_tree.prefix_of(Path("/c/root/usr/bin/qemu-system-x86_64")) == Path("/c/root/usr")


def test_tree_argv_and_env():
    t = qemu_tree.QemuTree(Path("/p/usr/bin/q"), (Path("/p/usr/share/qemu"),
                                                  Path("/p/usr/share/seabios")),
                           Path("/p/usr/lib/qemu"))
    assert t.data_argv() == ["-L", "/p/usr/share/qemu", "-L", "/p/usr/share/seabios"]
    assert t.env() == {"QEMU_MODULE_DIR": "/p/usr/lib/qemu"}
    assert qemu_tree.QemuTree(Path("/usr/bin/q"), system=True).env() == {}


def _install(root: Path, mode: int = 0o755) -> Path:
    """A fake QEMU tree as `dpkg -x` leaves one: usr/bin, usr/share/qemu, seabios, modules."""
    for d in ("usr/bin", "usr/share/qemu", "usr/share/seabios", "usr/lib/x86_64-linux-gnu/qemu"):
        (root / d).mkdir(parents=True)
    b = root / "usr/bin/qemu-system-x86_64"
    b.write_text("#!/bin/sh\necho 'QEMU emulator version 10.0.2'\n")
    b.chmod(mode)
    return b


def test_resolve_finds_dirs_from_the_prefix(tmp_path):
    b = _install(tmp_path)
    t = qemu_tree.resolve(str(b))
    assert t.binary == b and not t.system
    assert t.data_dirs == (tmp_path / "usr/share/qemu", tmp_path / "usr/share/seabios")
    assert t.module_dir == tmp_path / "usr/lib/x86_64-linux-gnu/qemu"


def test_resolve_with_datadir_given(tmp_path):
    b = _install(tmp_path)
    other = tmp_path / "fw"
    other.mkdir()
    t = qemu_tree.resolve(str(b), str(other))
    assert t.data_dirs == (other,)


def test_the_system_binary_runs_as_it_is(tmp_path):
    b = _install(tmp_path)
    link = tmp_path / "qemu-link"
    link.symlink_to(b)
    t = qemu_tree.resolve(str(link), system=str(b))
    assert t.system and t.data_argv() == [] and t.env() == {}


def test_a_symlink_is_followed_once_and_its_target_checked(tmp_path):
    b = _install(tmp_path)
    link = tmp_path / "q"
    link.symlink_to(b)
    assert qemu_tree.resolve(str(link)).binary == b


def test_a_binary_others_can_write_is_refused(tmp_path):
    b = _install(tmp_path, 0o777)
    with pytest.raises(VirtbenchError, match=r"binary=.*writable by other users \(mode 0777\)"):
        qemu_tree.resolve(str(b))


def test_a_directory_others_can_write_on_the_path_is_refused(tmp_path):
    b = _install(tmp_path)
    os.chmod(tmp_path / "usr/bin", 0o777)
    with pytest.raises(VirtbenchError, match=r"its directory .*/usr/bin is writable"):
        qemu_tree.resolve(str(b))


def test_a_data_dir_others_can_write_is_refused(tmp_path):
    b = _install(tmp_path)
    os.chmod(tmp_path / "usr/share/seabios", 0o777)
    with pytest.raises(VirtbenchError, match=r"data directory .*seabios is writable"):
        qemu_tree.resolve(str(b))


@pytest.mark.parametrize("given,message", [("qemu", "not an absolute path"),
                                           ("/no/such/qemu", "does not exist")])
def test_bad_paths_are_one_line(given, message):
    with pytest.raises(VirtbenchError, match=message) as exc:
        qemu_tree.resolve(given)
    assert "\n" not in str(exc.value)


def test_a_directory_is_not_a_binary(tmp_path):
    with pytest.raises(VirtbenchError, match="is not a regular file"):
        qemu_tree.resolve(str(tmp_path))
