"""Imports run one way: cli -> web -> fleet -> run -> history -> analysis/report -> study -> benchmarks/environments
-> machinery -> store/stats/model -> core.

Every module of the package is put in a layer below; a module may import its own layer or
lower ones, never a higher one. Environments and benchmarks share a layer but do not import
each other: a benchmark asks the environment object it is given, and an environment runs
whatever benchmark object it is handed.

Imports are read with ast from the source, wherever they sit (module level or inside a
function: a lazy import is still a dependency). Not counted: imports under
`if TYPE_CHECKING:` (annotations only, never executed).

A known violation that cannot be fixed yet goes into EXCEPTIONS with its reason; an
exception that no longer happens fails the test, so the list stays true.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = "virtbench"
ROOT = Path(__file__).resolve().parents[2] / PACKAGE

# Lowest first. A module's layer is that of its longest listed prefix (a package covers
# its submodules). A new module that matches nothing fails test_every_module_has_a_layer.
# The names are "layer package.level"; virtbench/__init__.py's table says the same
# (test_the_package_docstring_is_the_layer_list).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("virtbench", "virtbench.core")),
    ("foundations", ("virtbench.foundations", "virtbench.foundations.store",
                     "virtbench.foundations.stats", "virtbench.foundations.model")),
    ("machinery", ("virtbench.machinery", "virtbench.machinery.agent", "virtbench.machinery.host",
                   "virtbench.machinery.machine", "virtbench.machinery.kernels",
                   "virtbench.machinery.image", "virtbench.machinery.exits",
                   "virtbench.machinery.vmlife")),
    ("measure", ("virtbench.measure", "virtbench.measure.environments",
                 "virtbench.measure.benchmarks")),
    ("study", ("virtbench.study",)),
    ("results.analysis", ("virtbench.results", "virtbench.results.analysis",
                          "virtbench.results.report")),
    ("results.history", ("virtbench.results.history",)),
    ("execution.run", ("virtbench.execution", "virtbench.execution.run")),
    ("execution.fleet", ("virtbench.execution.fleet",)),
    ("interface.web", ("virtbench.interface", "virtbench.interface.web")),
    ("interface.cli", ("virtbench.interface.cli", "virtbench.__main__")),
]

# Packages of one layer that must not import each other.
SIBLINGS = (("virtbench.measure.environments", "virtbench.measure.benchmarks"),)

# (importer, imported): reason. Empty today: every import runs one way.
EXCEPTIONS: dict[tuple[str, str], str] = {}


def module_name(path: Path, root: Path | None = None) -> str:
    parts = list(path.relative_to((root or ROOT).parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imported_names(source: str, importer: str, package: bool,
                   exists=lambda name: False) -> set[str]:
    """The absolute names of what `importer` imports at run time (ast; no execution).
    `from X import Y` names X.Y when `exists("X.Y")` (a submodule), else X."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking_only(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = importer.split(".")
                keep = len(parts) - node.level + (1 if package else 0)
                base = ".".join(parts[:keep] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if exists(sub) else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return {name for name in found if name == PACKAGE or name.startswith(PACKAGE + ".")}


def layer_of(name: str) -> int | None:
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    return best


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def violations(importer: str, imported: set[str]) -> list[tuple[str, str, str]]:
    """(importer, imported, why) for each import that breaks the direction."""
    found = []
    mine = layer_of(importer)
    for name in sorted(imported):
        theirs = layer_of(name)
        if mine is None or theirs is None:
            continue            # test_every_module_has_a_layer names it
        if theirs > mine:
            found.append((importer, name, f"{LAYERS[mine][0]} imports {LAYERS[theirs][0]}"))
            continue
        for a, b in SIBLINGS:
            for x, y in ((a, b), (b, a)):
                if _within(importer, x) and _within(name, y):
                    found.append((importer, name, f"{x} imports its sibling {y}"))
    return found


def _modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _tree_violations() -> list[tuple[str, str, str]]:
    mods = _modules()
    found = []
    for name, path in mods.items():
        imported = imported_names(path.read_text(), name, is_package(path), mods.__contains__)
        found += violations(name, imported)
    return found


# -- the tree ------------------------------------------------------------------------------

def test_every_module_has_a_layer():
    unplaced = [name for name in _modules() if layer_of(name) is None]
    assert unplaced == [], f"put these modules in a layer in tests/unit/test_layers.py: {unplaced}"


def test_imports_run_one_way():
    found = [v for v in _tree_violations() if (v[0], v[1]) not in EXCEPTIONS]
    assert found == [], "upward or sibling imports:\n" + "\n".join(
        f"  {a} -> {b} ({why})" for a, b, why in found)


def test_every_exception_still_happens():
    happening = {(a, b) for a, b, _ in _tree_violations()}
    stale = sorted(set(EXCEPTIONS) - happening)
    assert stale == [], f"these exceptions no longer happen; remove them: {stale}"


def import_graph() -> dict[str, set[str]]:
    """module -> the package's modules it imports at run time (lazy imports included)."""
    mods = _modules()
    return {name: {n for n in imported_names(path.read_text(), name, is_package(path),
                                             mods.__contains__) if n in mods and n != name}
            for name, path in mods.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


# cycles that cannot be broken yet, with the reason; a cycle that is gone fails the test
KNOWN_CYCLES: dict[tuple[str, ...], str] = {}


def test_no_import_cycles():
    found = {tuple(c) for c in cycles(import_graph())}
    assert sorted(found - set(KNOWN_CYCLES)) == [], "import cycles (lazy imports count)"
    assert sorted(set(KNOWN_CYCLES) - found) == [], "these cycles are gone; remove them"


def test_a_cycle_is_caught():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_the_moves_of_issue_9_hold():
    """The two upward imports issue 9 removed stay removed."""
    mods = _modules()
    netpath = imported_names(mods["virtbench.machinery.host.net.netpath"].read_text(), "virtbench.machinery.host.net.netpath",
                             False, mods.__contains__)
    assert not any(_within(n, "virtbench.measure.environments") for n in netpath)
    for name, path in mods.items():
        if _within(name, "virtbench.measure.environments"):
            imported = imported_names(path.read_text(), name, is_package(path),
                                      mods.__contains__)
            assert not any(_within(n, "virtbench.measure.benchmarks") for n in imported), name


# -- the checker itself, on made-up sources ----------------------------------------------

MODULES = {"virtbench.measure.environments.base", "virtbench.measure.environments", "virtbench.machinery.host.net.netpath",
           "virtbench.measure.benchmarks", "virtbench.measure.benchmarks.base", "virtbench.core.outcome"}


@pytest.mark.parametrize("importer, package, source, expected", [
    # relative, from a module: two dots climb to the package's parent
    ("virtbench.measure.environments.group", False, "from ..benchmarks.base import Metric\n",
     {"virtbench.measure.benchmarks.base"}),
    # relative from a package's __init__: one dot is the package itself
    ("virtbench.measure.environments", True, "from .base import Environment\n",
     {"virtbench.measure.environments.base"}),
    # `from .. import X` where X is a module names the module, else the package
    ("virtbench.measure.environments.native", False,
     "from ...machinery.host.net import netpath, __version__\n",
     {"virtbench.machinery.host.net.netpath", "virtbench.machinery.host.net"}),
    # lazy imports count; TYPE_CHECKING ones do not; third-party ones are ignored
    ("virtbench.machinery.host.net.netpath", False,
     "import json\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
     "    from ..benchmarks.base import Benchmark\n"
     "def f():\n    from ....measure.environments.base import NetPath\n    import virtbench.core.outcome\n",
     {"virtbench.measure.environments.base", "virtbench.core.outcome"}),
])
def test_imported_names(importer, package, source, expected):
    assert imported_names(source, importer, package, MODULES.__contains__) == expected


def test_an_upward_import_is_caught():
    [(a, b, why)] = violations("virtbench.machinery.host.net.netpath", {"virtbench.measure.environments.base",
                                                     "virtbench.machinery.host.net.netns", "virtbench.core.errors"})
    assert (a, b) == ("virtbench.machinery.host.net.netpath", "virtbench.measure.environments.base")
    assert why == "machinery imports measure"


def test_siblings_are_caught_both_ways():
    up = violations("virtbench.measure.environments.group", {"virtbench.measure.benchmarks.base"})
    assert [v[1] for v in up] == ["virtbench.measure.benchmarks.base"]
    down = violations("virtbench.measure.benchmarks.disk.base", {"virtbench.measure.environments.base"})
    assert [v[1] for v in down] == ["virtbench.measure.environments.base"]
    # same package, same layer, lower layers: fine
    assert violations("virtbench.measure.benchmarks.disk.dd", {"virtbench.measure.benchmarks.base",
                                                       "virtbench.core.outcome", "virtbench"}) == []


# -- the package's own table -----------------------------------------------------------------

def docstring_layers(doc: str) -> list[tuple[str, list[list[str]]]]:
    """virtbench/__init__.py's table, highest layer first: (layer package, its levels, highest
    first, each a list of packages). A row is `    NAME  a > b, c | d  words`; the table ends
    at the first line that is not one."""
    rows: list[tuple[str, str]] = []
    for line in doc.split("layers:\n", 1)[1].splitlines():
        head = re.match(r"    (\w+)\s{2,}(.*)$", line)
        if not head:
            break
        rows.append((head[1], head[2]))
    table = []
    for name, rest in rows:
        # the packages: names joined by ',', '>' or '|' up to the first two spaces of words
        packages = re.match(r"([a-z_]+(?:\s*[,>|]\s*[a-z_]+)*)", rest)[1]
        levels = [[p.strip() for p in re.split(r"[,|]", level)] for level in packages.split(">")]
        table.append((name, levels))
    return table


def test_the_package_docstring_is_the_layer_list():
    """virtbench/__init__.py's table and LAYERS say the same, level by level."""
    import virtbench
    from_doc = []
    for name, levels in reversed(docstring_layers(virtbench.__doc__)):
        for level in reversed(levels):
            prefixes = sorted(f"virtbench.{name}" if p == name else f"virtbench.{name}.{p}"
                              for p in level)
            from_doc.append(prefixes)
    from_test = [sorted(p for p in prefixes if p not in ("virtbench", "virtbench.__main__")
                        and not any(q.startswith(p + ".") for q in prefixes))
                 for _, prefixes in LAYERS]
    # a layer package listed as a level of its own (study, core) stands for itself
    assert from_doc == [[p for p in level] for level in from_test]


def test_the_layer_packages_are_the_tree():
    """Every layer package of the table is a directory of virtbench/ with a docstring saying
    what it holds and what it may import; nothing else sits at the top but the package's
    own __init__ and __main__."""
    import importlib

    import virtbench
    names = [name for name, _ in docstring_layers(virtbench.__doc__)]
    top = sorted(p.name for p in ROOT.iterdir() if p.name != "__pycache__")
    assert top == sorted(names + ["__init__.py", "__main__.py"])
    for name, levels in docstring_layers(virtbench.__doc__):
        package = importlib.import_module(f"virtbench.{name}")
        assert package.__doc__ and "import" in package.__doc__.lower(), name
        for level in levels:
            for sub in level:
                if sub != name:
                    assert (ROOT / name / sub / "__init__.py").is_file(), f"{name}/{sub}"
