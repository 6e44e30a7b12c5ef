"""docs/architecture.md stays true line by line where it names code: every path it gives
under virtbench/ exists, and every name it puts beside a path (`study/design.py` `plan()`,
`run/keeper.py` `Keeper`) is defined in that module, so a rename or a move shows here."""
from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PACKAGE = REPO / "virtbench"
DOC = REPO / "docs" / "architecture.md"

# `path` or `virtbench/path`, a file (.py) or a directory (ending in /)
PATH = re.compile(r"`(?:virtbench/)?((?:[a-z_]+/)+(?:[a-z_]+\.py)?)`")
# `path.py` `Name` or `Name.attr` or `name()`: the name beside the path
NAMED = re.compile(r"`(?:virtbench/)?((?:[a-z_]+/)+[a-z_]+\.py)` `([A-Za-z_][\w.]*)(?:\(\))?`")


def defined(path: Path) -> set[str]:
    """Top-level names a module defines (classes, functions, assignments, imports)."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def exists(rel: str) -> bool:
    """Under virtbench/ or the repository; a path given inside its package's paragraph
    (`vmm/`, `nested/inside.py`) under any package of virtbench/."""
    if (PACKAGE / rel).exists() or (REPO / rel).exists():
        return True
    return any((d / rel).exists() for d in PACKAGE.rglob("*") if d.is_dir())


def test_every_path_named_exists():
    missing = []
    for m in PATH.finditer(DOC.read_text()):
        rel = m.group(1)
        if rel.startswith(("tests/", "docs/", "studies/", "bench/", "scripts/")):
            continue
        if not exists(rel):
            missing.append(rel)
    assert missing == [], f"docs/architecture.md names paths that are not there: {missing}"


def test_every_name_beside_a_path_is_defined_there():
    wrong = []
    for m in NAMED.finditer(DOC.read_text()):
        rel, name = m.group(1), m.group(2).split(".")[0]
        path = PACKAGE / rel
        if path.exists() and name not in defined(path):
            wrong.append(f"{rel} {name}")
    assert wrong == [], f"docs/architecture.md names what its module does not define: {wrong}"
    assert len(NAMED.findall(DOC.read_text())) >= 15


def test_the_readers_on_made_up_text(tmp_path):
    mod = tmp_path / "m.py"
    mod.write_text("import os\nfrom x import y as z\nA = 1\n"
                   "class K:\n    pass\ndef f():\n    pass\n")
    assert defined(mod) == {"os", "z", "A", "K", "f"}
    text = "see `study/design.py` `plan()` and `virtbench/run/keeper.py` `Keeper.ready`"
    assert NAMED.findall(text) == [("study/design.py", "plan"), ("run/keeper.py", "Keeper.ready")]
