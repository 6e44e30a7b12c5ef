#!/usr/bin/env python3
"""How long the light commands take to start: `virtbench --version`, `--help` and `runs` on a
store with a few runs, each the median of N whole processes (interpreter start included),
and, for scale, the interpreter alone and `import sqlalchemy` alone (what `runs` cannot
avoid: it reads the store). Target: <= 0.2 s each (issue 20); the CPU column is what counts on a loaded host.

    .venv/bin/python bench/startup.py [-n 15]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def median_s(argv: list[str], n: int, env: dict) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system) of n processes. On a loaded host
    the wall time includes waiting for a CPU; the CPU time is what the command itself costs."""
    wall, cpu = [], []
    for _ in range(n):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True, timeout=120)
        wall.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(wall), statistics.median(cpu)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=15)
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, VIRTBENCH_STORE=f"sqlite:///{tmp}/store.db",
                   VIRTBENCH_TMP=f"{tmp}/work", PYTHONPATH=str(HERE))
        for _ in range(3):        # a store with runs in it (native pi, quick, one trial)
            subprocess.run([py, "-m", "virtbench.interface.cli.commands", "run", "--env", "native", "--bench", "pi",
                            "--trials", "1", "--quick", "--no-progress"], env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        rows = [("python -c pass", [py, "-c", "pass"]),
                ("python -c 'import sqlalchemy'", [py, "-c", "import sqlalchemy"]),
                ("virtbench --version", [py, "-m", "virtbench.interface.cli.commands", "--version"]),
                ("virtbench --help", [py, "-m", "virtbench.interface.cli.commands", "--help"]),
                ("virtbench runs", [py, "-m", "virtbench.interface.cli.commands", "runs"])]
        print(f"median of {args.n} processes each (load {os.getloadavg()[0]:.1f}): wall, CPU")
        for name, argv in rows:
            wall, cpu = median_s(argv, args.n, env)
            print(f"  {name:32s} {wall:6.3f} s  {cpu:6.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
