"""The test hook bench/precision.py injects a known slowdown with:
VIRTBENCH_INJECT_SLOWDOWN=F makes every measured section about 1 + F times as long."""
import pytest
from kernelfix import run_injected, runs_injected  # noqa: F401


@pytest.mark.parametrize("bad", ["abc", "0", "-0.1", "2"])
def test_a_value_out_of_range_does_nothing(kernel_bin_dir, bad):
    (result, err), *_ = runs_injected(kernel_bin_dir, "pi", ["-k", "10"], bad)
    assert result["verified"] is True and "test hook" not in err
