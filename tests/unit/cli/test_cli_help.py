"""Every command's --help works (walked from the parser itself, so a new command is covered),
and a newcomer's first commands on an empty store end with their documented status and one
line at most, never a traceback."""
from __future__ import annotations
import argparse
import subprocess
import sys
import pytest
from virtbench.interface.cli.commands import build_parser


def command_paths(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()):
    yield prefix
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from command_paths(sub, prefix + (name,))


PATHS = list(command_paths(build_parser()))


def cli(*args: str, env: dict | None = None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "virtbench.interface.cli.commands", *args], capture_output=True,
                          text=True, timeout=120, env=env, cwd=cwd)


def test_the_walk_finds_every_command_and_subcommand():
    names = {" ".join(p) for p in PATHS}
    assert {"", "run", "report", "image build", "fleet run", "fleet status", "worker"} <= names


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "virtbench")
def test_help_of_every_command_works(path):
    proc = cli(*path, "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: ") and "Traceback" not in proc.stderr
