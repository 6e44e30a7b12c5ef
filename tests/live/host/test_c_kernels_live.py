"""The live part of tests/unit/kernels/test_c_kernels.py: its tests that need root and this host.

Tests of the C benchmark kernels (kernels/himeno.c, stream.c, pi.c).

Each kernel must print exactly one JSON line on stdout and human text on
stderr; exit 0 on success, 3 on a verification failure (JSON still printed),
2 on bad arguments.
"""
import os
from pathlib import Path
import pytest
from kernelfix import assert_contract, assert_usage_error, himeno_reference_gosa  # noqa: F401

# grid points including boundaries, as RIKEN's C distribution names its sizes
HIMENO_GRIDS = {"XS": (32, 32, 64), "S": (64, 64, 128), "M": (128, 128, 256), "L": (256, 256, 512)}


# Tolerances from measurement (float32 kernel vs float64 reference), each
# with a >= 5x margin.  The first iterations are the worst because every point of
# an i-plane then has the same value and hence the same rounding error.
@pytest.mark.parametrize("size,iterations,rel_tol", [
    ("XS", 1, 1e-3),
    ("XS", 48, 5e-5),
    ("XS", 224, 5e-5),
    ("S", 28, 1e-3),
    ("S", 50, 1e-3),       # no reference residual for 50: unverified, still computed right
])
def test_himeno_gosa_matches_numpy_reference(run_kernel, size, iterations, rel_tol):
    out = assert_contract(run_kernel("himeno", "-s", size, "-n", iterations))
    grid = HIMENO_GRIDS[size]
    assert out["kernel"] == "himeno"
    assert out["size"] == size
    assert out["grid"] == list(grid)
    assert out["iterations"] == iterations
    ref = himeno_reference_gosa(*grid, iterations)
    assert out["gosa"] == pytest.approx(ref, rel=rel_tol), (out["gosa"], ref)


def test_size_l_padded_is_himeno_l_and_himeno_l_is_size_l_only(run_kernel):
    """L's padded arrays (1.9 GB of static arrays) would make every himeno run need that much
    address space: they are in himeno-l alone, and each program says which to use."""
    refused = run_kernel("himeno", "-s", "L", "-n", 1)
    assert_usage_error(refused)
    assert "himeno-l" in refused.stderr
    packed = assert_contract(run_kernel("himeno", "-s", "L", "-l", "packed", "-n", 1, timeout=300))
    assert packed["verified"] is True
    other = run_kernel("himeno-l", "-s", "M", "-n", 1)
    assert_usage_error(other)
    assert "size M is the program himeno" in other.stderr
    assert run_kernel("himeno-l", "-s", "L", "-l", "packed", "-n", 1, timeout=300).returncode == 0


def test_two_processes_building_the_kernels_at_once_both_get_them(tmp_path):
    # two runs starting together on a fresh cache: one builds, the other waits for it
    import subprocess
    import sys
    env = dict(os.environ, VIRTBENCH_CACHE=str(tmp_path))
    code = "from virtbench.machinery.kernels import build; print(build.build())"
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    results = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in results]
    out = {o.strip() for o, _ in results}
    assert len(out) == 1
    from virtbench.machinery.kernels import build as kernels
    built = Path(out.pop())
    assert all((built / k).exists() for k in kernels.KERNELS)
    assert not [p for p in (tmp_path / "kernels").iterdir() if ".tmp" in p.name]
