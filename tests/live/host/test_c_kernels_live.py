"""The live part of tests/unit/kernels/test_c_kernels.py: its tests that need root and this host.

Tests of the C benchmark kernels (kernels/himeno.c, stream.c, pi.c).

Each kernel must print exactly one JSON line on stdout and human text on
stderr; exit 0 on success, 3 on a verification failure (JSON still printed),
2 on bad arguments.
"""
import os
from pathlib import Path
import numpy as np
import pytest

# grid points including boundaries, as RIKEN's C distribution names its sizes
HIMENO_GRIDS = {"XS": (32, 32, 64), "S": (64, 64, 128), "M": (128, 128, 256), "L": (256, 256, 512)}


def assert_contract(run, expected_rc=0):
    assert run.returncode == expected_rc, f"{run.args}: rc {run.returncode}\n{run.stderr}"
    lines = run.stdout.splitlines()
    assert len(lines) == 1, f"stdout must be exactly one JSON line, got {run.stdout!r}"
    return run.json


def assert_usage_error(run):
    assert run.returncode == 2, f"{run.args}: rc {run.returncode}\n{run.stderr}"
    assert run.stdout == ""
    assert "usage:" in run.stderr


def himeno_reference_gosa(imax, jmax, kmax, iterations):
    """Independent double-precision numpy Himeno: residual of the last iteration.

    Same initialisation as the benchmark: a = (1, 1, 1, 1/6), b = 0, c = 1,
    bnd = 1, wrk1 = 0, p = i^2/(imax-1)^2, omega = 0.8.  The initial values
    are rounded to float32 first because that is what the kernel's float
    arrays hold; all arithmetic is then done in float64.
    """
    shape = (imax, jmax, kmax)
    f32 = lambda v: float(np.float32(v))  # noqa: E731
    a = [np.ones(shape), np.ones(shape), np.ones(shape), np.full(shape, f32(np.float32(1) / np.float32(6)))]
    b = [np.zeros(shape) for _ in range(3)]
    c = [np.ones(shape) for _ in range(3)]
    bnd = np.ones(shape)
    wrk1 = np.zeros(shape)
    i = np.arange(imax, dtype=np.float64)
    p_i = (i * i / float((imax - 1) ** 2)).astype(np.float32).astype(np.float64)
    p = np.broadcast_to(p_i[:, None, None], shape).copy()
    omega = f32(0.8)

    inner = (slice(1, -1),) * 3

    def P(di, dj, dk):  # p shifted by (di, dj, dk), restricted to the interior
        return p[1 + di:imax - 1 + di, 1 + dj:jmax - 1 + dj, 1 + dk:kmax - 1 + dk]

    A = [x[inner] for x in a]
    B = [x[inner] for x in b]
    C = [x[inner] for x in c]
    gosa = None
    for _ in range(iterations):
        s0 = (A[0] * P(1, 0, 0) + A[1] * P(0, 1, 0) + A[2] * P(0, 0, 1)
              + B[0] * (P(1, 1, 0) - P(1, -1, 0) - P(-1, 1, 0) + P(-1, -1, 0))
              + B[1] * (P(0, 1, 1) - P(0, -1, 1) - P(0, 1, -1) + P(0, -1, -1))
              + B[2] * (P(1, 0, 1) - P(-1, 0, 1) - P(1, 0, -1) + P(-1, 0, -1))
              + C[0] * P(-1, 0, 0) + C[1] * P(0, -1, 0) + C[2] * P(0, 0, -1)
              + wrk1[inner])
        ss = (s0 * A[3] - P(0, 0, 0)) * bnd[inner]
        gosa = float(np.sum(ss * ss))
        p[inner] = P(0, 0, 0) + omega * ss  # Jacobi: all of s0 used the old p
    return gosa


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
    code = "from virtbench.kernels import build; print(build.build())"
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    results = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in results]
    out = {o.strip() for o, _ in results}
    assert len(out) == 1
    from virtbench.kernels import build as kernels
    built = Path(out.pop())
    assert all((built / k).exists() for k in kernels.KERNELS)
    assert not [p for p in (tmp_path / "kernels").iterdir() if ".tmp" in p.name]
