#!/usr/bin/env python3
"""How long the light commands take to start: `virtbench --version`, `--help` and `runs` on a
store with a few runs, each the median of N whole processes (interpreter start included),
and, for scale, the interpreter alone and `import sqlalchemy` alone (what `runs` cannot
avoid: it reads the store). Target: <= 0.2 s each (issue 20).

    .venv/bin/python bench/startup.py [-n 15]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def median_s(argv: list[str], n: int, env: dict) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True, timeout=120)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=15)
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, VIRTBENCH_STORE=f"sqlite:///{tmp}/store.db",
                   VIRTBENCH_TMP=f"{tmp}/work", PYTHONPATH=str(HERE))
        for _ in range(3):        # a store with runs in it (native pi, quick, one trial)
            subprocess.run([py, "-m", "virtbench.cli", "run", "--env", "native", "--bench", "pi",
                            "--trials", "1", "--quick", "--no-progress"], env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        rows = [("python -c pass", [py, "-c", "pass"]),
                ("python -c 'import sqlalchemy'", [py, "-c", "import sqlalchemy"]),
                ("virtbench --version", [py, "-m", "virtbench.cli", "--version"]),
                ("virtbench --help", [py, "-m", "virtbench.cli", "--help"]),
                ("virtbench runs", [py, "-m", "virtbench.cli", "runs"])]
        print(f"median of {args.n} processes each (load {os.getloadavg()[0]:.1f})")
        for name, argv in rows:
            print(f"  {name:32s} {median_s(argv, args.n, env):6.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
