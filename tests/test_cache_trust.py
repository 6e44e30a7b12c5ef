"""The cache holds what virtbench runs as root (its kernels, the guest image, the TCG plugin):
a cache another user could write is refused before anything in it is built or run."""
from __future__ import annotations

import os
import pwd
import subprocess
import sys

import pytest

from virtbench import kernels
from virtbench.errors import VirtbenchError

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="ownership cases need root")
NOBODY = pwd.getpwnam("nobody").pw_uid


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


@needs_root
def test_a_run_with_another_users_cache_exits_2_and_runs_nothing_from_it(tmp_path):
    """nobody's cache holds a 'kernel' that would leave a marker: the run refuses in one line
    before it builds or runs anything."""
    cache, marker = tmp_path / "cache", tmp_path / "pwned"
    out = cache / "kernels" / kernels.sources_hash(kernels.source_dir())
    out.mkdir(parents=True)
    for name in kernels.KERNELS:
        (out / name).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (out / name).chmod(0o755)
    for p in (cache, cache / "kernels", out):
        os.chown(p, NOBODY, -1)
    store = tmp_path / "store.db"
    env = dict(os.environ, VIRTBENCH_CACHE=str(cache), VIRTBENCH_TMP=str(tmp_path / "work"),
               VIRTBENCH_STORE=f"sqlite:///{store}")
    proc = subprocess.run([sys.executable, "-m", "virtbench.cli", "run", "--env", "native",
                           "--bench", "pi", "--trials", "1", "--quick", "--no-progress"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert f"cache directory {cache} is owned by uid {NOBODY}" in line
    assert "VIRTBENCH_CACHE" in line
    assert not marker.exists() and not store.exists()
