"""The live part of tests/unit/cli/test_cli_help.py: its tests that need root and this host.

Every command's --help works (walked from the parser itself, so a new command is covered),
and a newcomer's first commands on an empty store end with their documented status and one
line at most, never a traceback.
"""
from __future__ import annotations
import os
import subprocess
import sys
from pathlib import Path

import prebuild
import pytest

REPO = Path(__file__).resolve().parents[3]


def cli(*args: str, env: dict | None = None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "virtbench.interface.cli.commands", *args], capture_output=True,
                          text=True, timeout=120, env=env, cwd=cwd)


@pytest.fixture
def empty(tmp_path):
    return dict(os.environ, VIRTBENCH_STORE=f"sqlite:///{tmp_path / 'store.db'}",
                VIRTBENCH_TMP=str(tmp_path / "tmp"))


@pytest.mark.parametrize("args, code", [
    (("envs",), 0), (("benchmarks",), 0),
    (("run", str(REPO / "studies" / "quick.toml"), "--dry-run"), 0),
    (("run", "--env", "native", "--bench", "stream", "--bench", "pi", "--dry-run"), 0),
    (("runs",), 2), (("report",), 2), (("compare", "A", "B"), 2)])   # no store yet: one line
def test_a_newcomers_first_commands_on_an_empty_store(args, code, empty, tmp_path):
    said = prebuild.wait("probes")      # `envs` answers from the probes' cache
    if said:
        print(said, flush=True)
    proc = cli(*args, env=empty, cwd=tmp_path)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    if code == 2:                       # one line naming the thing and the fix
        assert len(proc.stderr.strip().splitlines()) == 1 and "virtbench run" in proc.stderr
    else:
        assert proc.stdout.strip()
