"""The environment docs stay true: each arrow of docs/architecture.md's import drawing is an
import that exists, and the diff of docs/adding-an-environment.md applies to this tree and
its own tests pass there (a kind added as the guide says works, and is held to its
declaration)."""
import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

PACKAGE = REPO / "virtbench"


def _blocks(doc: str, lang: str = "") -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", (REPO / "docs" / doc).read_text(),
                      re.M | re.S)


def _imports(path: Path) -> set[Path]:
    """The package's files `path` imports (relative imports, at any depth, run time or not)."""
    found = set()
    here = path.parent
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom) or not node.level:
            continue
        base = here
        for _ in range(node.level - 1):
            base = base.parent
        if node.module:
            base = base.joinpath(*node.module.split("."))
        names = [base / alias.name for alias in node.names] + [base]
        for target in names:
            for candidate in (target.with_suffix(".py"), target / "__init__.py"):
                if candidate.exists():
                    found.add(candidate.resolve())
    return found


def test_each_arrow_of_the_architecture_drawings_is_an_import():
    # the import drawings: every line "FILE ──▶ FILE, FILE" (the life-cycle drawing is not)
    drawings = [b for b in _blocks("architecture.md")
                if all(re.match(r"^[\w/.]+\.py\s+──▶ ", line) for line in b.splitlines())]
    assert len(drawings) >= 2          # a run's way through the layers, the environments
    arrows = 0
    for line in (line for d in drawings for line in d.splitlines()):
        left, _, right = line.partition("──▶")
        importer = PACKAGE / left.strip()
        assert importer.exists(), left
        for name in right.split(","):
            imported = PACKAGE / name.strip()
            assert imported.exists(), name
            assert imported.resolve() in _imports(importer), f"{left.strip()} -> {name.strip()}"
            arrows += 1
    assert arrows >= 50
