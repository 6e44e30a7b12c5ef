"""The live part of tests/unit/kernels/test_cache_trust.py: its tests that need root and this host.

The cache holds what virtbench runs as root (its kernels, the guest image, the TCG plugin):
a cache another user could write is refused before anything in it is built or run.
"""
from __future__ import annotations
import os
import pwd
import subprocess
import sys
import pytest
from virtbench.machinery.kernels import build as kernels

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="ownership cases need root")

NOBODY = pwd.getpwnam("nobody").pw_uid


@pytest.fixture
def cache(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setenv("VIRTBENCH_CACHE", str(path))
    return path


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
    proc = subprocess.run([sys.executable, "-m", "virtbench.interface.cli.commands", "run", "--env", "native",
                           "--bench", "pi", "--trials", "1", "--quick", "--no-progress"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert f"cache directory {cache} is owned by uid {NOBODY}" in line
    assert "VIRTBENCH_CACHE" in line
    assert not marker.exists() and not store.exists()
