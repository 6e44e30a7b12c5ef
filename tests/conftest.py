from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run heavy tests (full-size kernels, many guest boots)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="heavy: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def fixture_text():
    def read(*parts: str) -> str:
        return FIXTURES.joinpath(*parts).read_text()
    return read


@pytest.fixture
def store_url(tmp_path, monkeypatch):
    """A fresh SQLite store per test, also set as $VIRTBENCH_STORE for subprocesses."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    monkeypatch.setenv("VIRTBENCH_STORE", url)
    return url
