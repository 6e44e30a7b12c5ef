"""Fixtures and helpers of the C kernel tests (unit and live tiers): build once, run, check the
output contract, a numpy reference for Himeno's residual, runs with an injected slowdown."""
import json
import os
import pathlib
import resource
import subprocess
from dataclasses import dataclass
from typing import Optional

import numpy as np
import pytest

from virtbench.machinery.kernels.build import source_dir


KERNELS_SRC = source_dir()


@dataclass
class KernelRun:
    args: list
    returncode: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Optional[dict]:
        """The contract: the last stdout line is one JSON object."""
        lines = self.stdout.splitlines()
        return json.loads(lines[-1]) if lines else None


@pytest.fixture(scope="session")
def kernel_bin_dir(tmp_path_factory) -> pathlib.Path:
    """Build all kernels once per session into a temporary OUT directory."""
    out = tmp_path_factory.mktemp("kernels-build")
    proc = subprocess.run(
        ["make", "-C", str(KERNELS_SRC), f"OUT={out}"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, f"kernel build failed:\n{proc.stdout}\n{proc.stderr}"
    # Warnings are enabled (-Wall -Wextra) and the build must stay clean.
    assert "warning" not in proc.stderr.lower(), f"kernel build warnings:\n{proc.stderr}"
    for name in ("himeno", "stream", "pi"):
        assert (out / name).is_file(), f"{name} not built in {out}"
    return out


@pytest.fixture(scope="session")
def run_kernel(kernel_bin_dir):
    """run_kernel("himeno", "-s", "XS") -> KernelRun."""

    def _run(name: str, *args: str, timeout: float = 120) -> KernelRun:
        cmd = [str(kernel_bin_dir / name), *map(str, args)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return KernelRun(cmd, proc.returncode, proc.stdout, proc.stderr)

    return _run


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


def run_injected(kernel_bin_dir, name, args, fraction):
    env = dict(os.environ)
    env.pop("VIRTBENCH_INJECT_SLOWDOWN", None)
    if fraction is not None:
        env["VIRTBENCH_INJECT_SLOWDOWN"] = fraction
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([str(kernel_bin_dir / name), *args], capture_output=True,
                          text=True, timeout=120, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    # the kernel's CPU time: the hook spins, so it lengthens CPU time as it lengthens the
    # section, and CPU time does not stretch when a shared host makes the kernel wait
    result["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result, proc.stderr


def runs_injected(kernel_bin_dir, name, args, fraction, n=1):
    return [run_injected(kernel_bin_dir, name, args, fraction) for _ in range(n)]
