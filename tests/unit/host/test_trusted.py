"""host/trusted.py: the rules for a file virtbench runs as root that it did not install."""
import os
import stat

from virtbench.machinery.host import trusted


def _st(mode: int, uid: int = 0) -> os.stat_result:
    return os.stat_result((mode, 0, 0, 1, uid, 0, 0, 0, 0, 0))


def test_root_owned_executable_is_trusted():
    assert trusted.file_problem(_st(stat.S_IFREG | 0o755), uid=1000) is None


def test_own_file_is_trusted():
    assert trusted.file_problem(_st(stat.S_IFREG | 0o700, uid=1000), uid=1000) is None


def test_other_owner_group_writable_symlink_and_non_file_are_refused():
    assert "owned by uid 1001" in trusted.file_problem(_st(stat.S_IFREG | 0o755, 1001), uid=0)
    assert "mode 0775" in trusted.file_problem(_st(stat.S_IFREG | 0o775), uid=0)
    assert trusted.file_problem(_st(stat.S_IFLNK | 0o777), uid=0) == "is a symbolic link"
    assert trusted.file_problem(_st(stat.S_IFDIR | 0o755), uid=0) == "is not a regular file"


def test_a_system_binary_passes(tmp_path):
    assert trusted.path_problem(trusted.resolve_trusted("/bin/sh", "shell")) is None
