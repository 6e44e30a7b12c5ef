"""A private work root for the tests of virtbench's private directories."""
from __future__ import annotations

import os
import tempfile

import pytest


ROOT = os.geteuid() == 0


@pytest.fixture
def tmp_root(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTBENCH_TMP", str(tmp_path))
    return tmp_path / "virtbench"


@pytest.fixture
def no_system_tmp(monkeypatch, tmp_path):
    """tempfile's default directory made unusable: anything that still puts files there fails."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-tmp"))
