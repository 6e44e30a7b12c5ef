"""Every command's --help works (walked from the parser itself, so a new command is covered),
and a newcomer's first commands on an empty store end with their documented status and one
line at most, never a traceback."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from virtbench.cli import build_parser

REPO = Path(__file__).resolve().parents[1]


def command_paths(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    yield prefix
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from command_paths(sub, prefix + (name,))


PATHS = list(command_paths(build_parser()))


def cli(*args: str, env: dict | None = None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "virtbench.cli", *args], capture_output=True,
                          text=True, timeout=120, env=env, cwd=cwd)


def test_the_walk_finds_every_command_and_subcommand():
    names = {" ".join(p) for p in PATHS}
    assert {"", "run", "report", "image build", "fleet run", "fleet status", "worker"} <= names


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "virtbench")
def test_help_of_every_command_works(path):
    proc = cli(*path, "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: ") and "Traceback" not in proc.stderr


@pytest.fixture
def empty(tmp_path):
    return dict(os.environ, VIRTBENCH_STORE=f"sqlite:///{tmp_path / 'store.db'}",
                VIRTBENCH_TMP=str(tmp_path / "tmp"))


@pytest.mark.parametrize("args, code", [
    (("envs",), 0), (("benchmarks",), 0),
    (("run", str(REPO / "studies" / "quick.toml"), "--dry-run"), 0),
    (("run", "--env", "native", "--bench", "stream", "--bench", "pi", "--dry-run"), 0),
    (("runs",), 0), (("report",), 2), (("compare", "A", "B"), 2)])
def test_a_newcomers_first_commands_on_an_empty_store(args, code, empty, tmp_path):
    proc = cli(*args, env=empty, cwd=tmp_path)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    if code == 2:                       # one line naming the thing and the fix
        assert len(proc.stderr.strip().splitlines()) == 1 and "virtbench run" in proc.stderr
    else:
        assert proc.stdout.strip()
