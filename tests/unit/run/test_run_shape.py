"""The run package's seams, read from its source (ast): adaptive trials and duet mode import
nothing of the runner (not even for annotations): they declare what they are handed; the
Runner's attributes are set in its constructor only (whatever a run has while it runs is its
session's); and the package's functions keep the project's sizes (under 60 lines, at most 8
parameters, self aside)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

RUN = Path(__file__).resolve().parents[3] / "virtbench" / "execution" / "run"

# what adaptive.py and duet.py must not import: the runner, its session, the executor
RUNNER_SIDE = {"runner", "session", "execute"}

# (module, function): why it is over a size today. Each must still be over (else: remove it).
KNOWN_SIZES: dict[tuple[str, str], str] = {}     # empty: every function of run/ fits


def run_modules_imported(path: Path) -> set[str]:
    """The modules of execution/run that `path` imports, anywhere in it (module level, in a
    function, under `if TYPE_CHECKING:`), relative or absolute."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:                      # from .x import y / from . import x
                names = [node.module] if node.module else [a.name for a in node.names]
                found |= {n.split(".")[0] for n in names}
            elif node.module and node.module.startswith("virtbench.execution.run."):
                found.add(node.module.split(".")[3])
            elif node.module == "virtbench.execution.run":
                found |= {a.name for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[3] for a in node.names
                      if a.name.startswith("virtbench.execution.run.")}
    return found


@pytest.mark.parametrize("module", ["adaptive.py", "duet.py"])
def test_adaptive_and_duet_import_nothing_of_the_runner_not_even_for_typing(module):
    assert run_modules_imported(RUN / module) & RUNNER_SIDE == set()


def test_the_import_reader_sees_an_import_under_type_checking(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                      "    from .runner import ActiveRun\n"
                      "def f():\n    from . import session\n"
                      "import virtbench.execution.run.execute\n")
    assert run_modules_imported(source) == {"runner", "session", "execute"}


def attributes_set_outside_init(path: Path, cls: str) -> list[str]:
    """`self.X = ...` (also augmented, annotated, in a tuple) in a method of `cls` other than
    __init__: "method: X" each."""
    tree = ast.parse(path.read_text())
    [klass] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
    out = []
    for method in klass.body:
        if not isinstance(method, ast.FunctionDef) or method.name == "__init__":
            continue
        for node in ast.walk(method):
            targets = (node.targets if isinstance(node, ast.Assign) else
                       [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
            for target in targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) \
                            and t.value.id == "self":
                        out.append(f"{method.name}: {t.attr}")
    return out


def test_the_runner_s_attributes_are_all_set_in_its_constructor():
    assert attributes_set_outside_init(RUN / "runner.py", "Runner") == []


def test_the_attribute_reader_sees_a_late_attribute(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("class Runner:\n    def __init__(self):\n        self.a = 1\n"
                      "    def go(self):\n        self.tracker = 2\n        self.a += 1\n"
                      "        self.x, (self.y, z) = 1, (2, 3)\n")
    assert attributes_set_outside_init(source, "Runner") == [
        "go: tracker", "go: a", "go: x", "go: y"]


def sizes(path: Path) -> dict[str, tuple[int, int]]:
    """{qualified name: (lines, parameters but self/cls)} of every function in `path`."""
    out = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = child.args
                params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
                params = [p for p in params if p is not None]
                if isinstance(node, ast.ClassDef) and params and params[0].arg in ("self", "cls"):
                    params = params[1:]
                out[prefix + child.name] = (child.end_lineno - child.lineno + 1, len(params))
                visit(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
    visit(ast.parse(path.read_text()), "")
    return out


def test_functions_of_the_run_package_stay_under_60_lines_and_8_parameters():
    over = {}
    for path in sorted(RUN.glob("*.py")):
        for name, (lines, params) in sizes(path).items():
            if lines >= 60 or params > 8:
                over[(path.name, name)] = (lines, params)
    assert sorted(set(over) - set(KNOWN_SIZES)) == [], over
    assert sorted(set(KNOWN_SIZES) - set(over)) == [], "within the sizes now: remove from KNOWN_SIZES"


def test_the_size_reader_counts_lines_and_parameters_but_self(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("class A:\n    def f(self, a, *b, c, **d):\n        pass\n"
                      "def g(a, b, c, d, e, f, g, h, i):\n    def inner():\n        return 1\n"
                      "    return inner\n")
    assert sizes(source) == {"A.f": (2, 4), "g": (4, 9), "g.inner": (2, 0)}
