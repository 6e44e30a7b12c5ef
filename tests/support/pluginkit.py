"""The TCG plugin's tests' needs: a C compiler, QEMU, a private cache."""
import shutil

import pytest


QEMU = shutil.which("qemu-system-x86_64")


needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


needs_qemu = pytest.mark.skipif(QEMU is None, reason="needs qemu-system-x86_64")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"
