"""No module of ours shadows the standard library where its directory is on sys.path.

A directory becomes sys.path[0] when a file in it runs by path: bench/'s scripts
(`python3 bench/X.py`), every test directory (pytest's prepend import mode puts a test file's
directory, which has no __init__.py, first; tests/conftest.py adds tests/support), and the
virtbench modules run as `python FILE` (RUN_BY_PATH). A module there named like a
standard-library module is what `import NAME` finds instead: bench/profile.py was `profile`
for every bench script, so cProfile (which imports profile) got ours.

A virtbench module run with `python -m` puts the current directory first, not its own, so its
neighbours shadow nothing. Every virtbench module with a `__main__` guard is in one of the
two tables below, so a new script cannot slip past unclassified.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
STDLIB = frozenset(sys.stdlib_module_names)

# virtbench modules run by path: their directory is sys.path[0] while they run
RUN_BY_PATH = {
    "virtbench/machinery/host/guardian.py": "host/watch.py starts it as sys.executable FILE",
    "virtbench/machinery/agent/program.py": "the native kind runs it as sys.executable FILE",
}
# virtbench modules with a __main__ guard that never run by path
NOT_BY_PATH = {
    "virtbench/__main__.py": "python -m virtbench",
    "virtbench/interface/cli/commands.py": "python -m virtbench",
    "virtbench/core/warning_kinds.py": "python -m virtbench.core.warning_kinds",
    "virtbench/foundations/model/__main__.py": "python -m virtbench.foundations.model",
    "virtbench/measure/environments/nested/inside.py": "python -m, in the outer guest",
    "virtbench/machinery/vmlife/ticker.py": "its source runs as python3 -c in the guest",
}


def has_main_guard(path: Path) -> bool:
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) \
                and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__":
            return True
    return path.name == "__main__.py"


def script_dirs(repo: Path = REPO) -> list[Path]:
    """The directories of ours that are sys.path[0] for something that runs."""
    dirs = {repo / "bench"}
    dirs |= {p.parent for p in (repo / "tests").rglob("*.py")}
    dirs |= {(repo / f).parent for f in RUN_BY_PATH}
    return sorted(d for d in dirs if d.is_dir())


def shadowing(dirs: list[Path], repo: Path = REPO) -> list[str]:
    """Each module or package in `dirs` named like a standard-library module."""
    found = []
    for d in dirs:
        for entry in sorted(d.iterdir()):
            name = entry.stem if entry.suffix == ".py" else entry.name
            is_module = entry.suffix == ".py" or (entry / "__init__.py").exists()
            if is_module and name in STDLIB:
                found.append(str(entry.relative_to(repo)))
    return found


def test_no_module_shadows_the_standard_library_where_it_runs():
    assert shadowing(script_dirs()) == [], \
        "rename these: they shadow the standard-library module of the same name"


def test_the_check_finds_a_shadowing_module(tmp_path):
    (tmp_path / "bench").mkdir()
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    for name in ("bench/profile.py", "bench/boot_time.py", "tests/unit/test_x.py",
                 "tests/unit/statistics.py"):
        (tmp_path / name).write_text("")
    assert shadowing(script_dirs(tmp_path), tmp_path) == ["bench/profile.py",
                                                         "tests/unit/statistics.py"]


def test_every_virtbench_script_is_classified():
    mains = {str(p.relative_to(REPO)) for p in (REPO / "virtbench").rglob("*.py")
             if has_main_guard(p)}
    assert mains == set(RUN_BY_PATH) | set(NOT_BY_PATH), \
        "say in RUN_BY_PATH or NOT_BY_PATH how each module with a __main__ guard runs"

