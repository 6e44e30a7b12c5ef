"""Fixtures for the report tests (unit and live tiers): a filled store, the artifacts directory."""
from pathlib import Path

import pytest
from reportkit import fill_store, study_dict

from virtbench.foundations.store import Store


@pytest.fixture
def filled(tmp_path):
    """(store, run_id) of a native + two guests run."""
    store = Store(f"sqlite:///{tmp_path / 'report.db'}")
    return store, fill_store(store, study_dict())


@pytest.fixture
def artifacts_dir():
    """Screenshots kept after the test: artifacts/ at the repo root (gitignored)."""
    d = Path(__file__).resolve().parents[2] / "artifacts"
    d.mkdir(exist_ok=True)
    return d
