"""The cache holds what virtbench runs as root (its kernels, the guest image, the TCG plugin):
a cache another user could write is refused before anything in it is built or run."""
from __future__ import annotations
import os
import pytest
from virtbench.machinery.kernels import build as kernels
from virtbench.core.errors import VirtbenchError


@pytest.fixture
def cache(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setenv("VIRTBENCH_CACHE", str(path))
    return path


def test_a_missing_cache_is_made_private(cache):
    assert kernels.cache_dir() == cache
    st = os.lstat(cache)
    assert st.st_mode & 0o777 == 0o700 and st.st_uid == os.geteuid()


def test_a_symlinked_cache_is_refused(cache, tmp_path):
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    cache.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(VirtbenchError, match=r"cache directory .*cache is a symbolic link; "
                                             r"remove it .* set \$VIRTBENCH_CACHE"):
        kernels.build()


def test_a_cache_others_can_write_is_refused(cache):
    cache.mkdir()
    os.chmod(cache, 0o777)
    with pytest.raises(VirtbenchError, match=r"writable by other users \(mode 0777\)"):
        kernels.cache_dir()


def test_a_cache_in_a_parent_others_can_rename_in_is_refused_before_it_is_made(cache,
                                                                                tmp_path):
    os.chmod(tmp_path, 0o777)                        # no sticky bit
    try:
        with pytest.raises(VirtbenchError, match="without the sticky bit"):
            kernels.cache_dir()
        assert not cache.exists()
    finally:
        os.chmod(tmp_path, 0o700)


def test_the_build_identity_is_the_sources_hash_and_the_compiler(tmp_path):
    """Two source trees that differ in one byte are two builds (issue 31: runs told apart)."""
    from virtbench.machinery.kernels import build
    (tmp_path / "pi.c").write_text("int main(void) { return 0; }\n")
    first = build.identity(tmp_path)
    assert first.startswith(f"sources {build.sources_hash(tmp_path)}")
    (tmp_path / "pi.c").write_text("int main(void) { return 1; }\n")
    assert build.identity(tmp_path).split(",")[0] != first.split(",")[0]
