"""The live part of tests/unit/docs/test_docs_environments.py: its tests that need root and this host.

The environment docs stay true: each arrow of docs/architecture.md's import drawing is an
import that exists, and the diff of docs/adding-an-environment.md applies to this tree and
its own tests pass there (a kind added as the guide says works, and is held to its
declaration).
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
import pytest

REPO = Path(__file__).resolve().parents[3]


def _blocks(doc: str, lang: str = "") -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", (REPO / "docs" / doc).read_text(),
                      re.M | re.S)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("git"),
                    reason="the guide's kind needs root and unshare(1); applying it, git")
def test_the_guides_diff_applies_and_its_tests_pass(tmp_path):
    [diff] = _blocks("adding-an-environment.md", "diff")
    for part in ("virtbench", "tests"):
        shutil.copytree(REPO / part, tmp_path / part,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"))
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    (tmp_path / "guide.diff").write_text(diff)
    applied = subprocess.run(["git", "apply", "guide.diff"], cwd=tmp_path, capture_output=True,
                             text=True, timeout=60)
    assert applied.returncode == 0, applied.stderr
    assert (tmp_path / "virtbench" / "measure" / "environments" / "unshare" / "__init__.py").exists()
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests/live/host/test_unshare.py",
                          "tests/unit/environments/test_capabilities.py",
                          "tests/live/host/test_capabilities_live.py",
                          "tests/unit/environments/test_environments.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, PYTHONPATH=str(tmp_path)))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout.splitlines()[-1]
