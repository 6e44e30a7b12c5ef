"""One name, one class: no two classes of virtbench/ share a name (COMMON rules; issue 38),
so that a name says which thing it is. Read with ast, nested classes included.

A known namesake that another change renames goes into KNOWN with its reason; one that no
longer happens fails the test, so the list stays true."""
from __future__ import annotations

import ast
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "virtbench"

# name: reason. Empty: every class of virtbench/ has a name of its own.
KNOWN: dict[str, str] = {}


@lru_cache(maxsize=None)
def classes(root: Path = ROOT) -> dict[str, list[str]]:
    """Class name -> where each class of that name is defined (path:line)."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                found[node.name].append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return found


def test_the_scan_sees_a_namesake(tmp_path):
    pkg = tmp_path / "virtbench"
    (pkg / "a").mkdir(parents=True)
    (pkg / "a" / "x.py").write_text("class Verdict:\n    pass\n")
    (pkg / "y.py").write_text("def f():\n    class Verdict:\n        pass\n")
    assert sorted(classes(pkg)["Verdict"]) == ["virtbench/a/x.py:1", "virtbench/y.py:2"]


def test_no_two_classes_share_a_name():
    shared = {name: where for name, where in classes().items()
              if len(where) > 1 and name not in KNOWN}
    assert shared == {}, "\n".join(f"{n}: {', '.join(w)}" for n, w in sorted(shared.items()))


def test_every_known_namesake_still_happens():
    stale = sorted(name for name in KNOWN if len(classes().get(name, [])) < 2)
    assert stale == [], f"these are renamed now; remove them from KNOWN: {stale}"
