"""The unit tier's store tests again, on a real PostgreSQL (tests/support/pgserver.py starts
it): every test of the modules below that takes a store (`store_url`, directly or through a
fixture of its module) runs here with that store on PostgreSQL instead of SQLite. The tests
are the unit modules' own functions, loaded from their files; nothing is copied."""
import importlib.util
import inspect
from pathlib import Path

import pytest

UNIT = Path(__file__).resolve().parents[2] / "unit"
MODULES = ("store/test_store.py", "store/test_store_upgrade.py", "analysis/test_compare.py",
           "analysis/test_run.py", "core/test_metric_identity.py")


def _load(rel: str):
    path = UNIT / rel
    spec = importlib.util.spec_from_file_location(f"pg_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _is_fixture(obj) -> bool:
    return hasattr(obj, "_pytestfixturefunction") or type(obj).__name__ == "FixtureFunctionDefinition"


def _takes_store(fn, fixtures: dict) -> bool:
    params = inspect.signature(fn).parameters
    return "store_url" in params or any(
        name in fixtures and "store_url" in inspect.signature(fixtures[name]).parameters
        for name in params)


def _collect() -> dict:
    found = {}
    for rel in MODULES:
        module = _load(rel)
        fixtures = {n: o for n, o in vars(module).items() if _is_fixture(o) and n != "store_url"}
        raw = {n: getattr(o, "__wrapped__", o) for n, o in fixtures.items()}
        tests = {n: o for n, o in vars(module).items()
                 if n.startswith("test_") and callable(o) and _takes_store(o, raw)}
        assert tests, f"{rel}: no test takes a store"
        found.update(fixtures)
        found.update({f"{module.__name__[3:]}__{n[5:]}": o for n, o in tests.items()})
    return found


globals().update(_collect())


@pytest.fixture
def store_url(pg_url, monkeypatch):
    """The store of these tests: a fresh PostgreSQL database (also $VIRTBENCH_STORE)."""
    monkeypatch.setenv("VIRTBENCH_STORE", pg_url)
    return pg_url
