"""The suite's own layout (tests/conftest.py): every test file is in a tier, the tiers run in
the order unit, services, host, guests, nested, and xdist gives the live tests to one worker
together while each unit test goes wherever a worker is free."""
import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def suite_conftest():
    spec = importlib.util.spec_from_file_location("suite_conftest", REPO / "tests" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_test_file_is_in_a_tier_and_the_live_tiers_follow_the_unit_tier():
    c = suite_conftest()
    files = sorted((REPO / "tests").rglob("test_*.py"))
    assert len(files) > 100
    assert [f for f in files if c.tier_rank(f) == len(c.TIER_ORDER)] == []
    ranks = {f.relative_to(REPO / "tests").parts[:2]: c.tier_rank(f) for f in files}
    assert ranks[("live", "nested")] > ranks[("live", "guests")] > ranks[("live", "host")] \
        > ranks[("live", "services")] > c.tier_rank(REPO / "tests/unit/test_layers.py") == 0


def test_the_live_tests_are_one_scope_and_each_unit_test_its_own():
    split = suite_conftest().LiveTogether._split_scope
    assert split(None, "tests/live/guests/test_qemu_boot.py::test_a[x]") == "live"
    assert split(None, "tests/live/nested/test_kvm_path.py::test_b") == "live"
    unit = "tests/unit/stats/test_decision.py::test_c"
    assert split(None, unit) == unit
