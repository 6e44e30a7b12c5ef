"""Fixtures of the study tests."""
from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def clean_dirs(tmp_path, monkeypatch, store_url):
    """Data and cache directories of our own, to show a bad study writes nothing at all."""
    dirs = [tmp_path / "data", tmp_path / "cache", tmp_path / "state"]
    for var, d in zip(("XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"), dirs):
        monkeypatch.setenv(var, str(d))
    return dirs + [Path(store_url[len("sqlite:///"):])]
