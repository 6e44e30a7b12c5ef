"""Fixtures for the C benchmark kernel tests (unit and live tiers): build once, run and parse."""
import json
import pathlib
import subprocess
from dataclasses import dataclass
from typing import Optional

import pytest

from virtbench.kernels.build import source_dir

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
