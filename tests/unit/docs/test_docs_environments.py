"""The environment docs stay true: each arrow of docs/architecture.md's import drawings is an
import that exists, each module drawn lists every import it makes (but the shared vocabulary
of core/ and the packages it reaches only on the way to a module of theirs), and the diff of
docs/adding-an-environment.md applies to this tree and its own tests pass there (a kind
added as the guide says works, and is held to its declaration)."""
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


def drawn_arrows() -> dict[str, list[str]]:
    """Each module of the import drawings (every line "FILE ──▶ FILE, FILE"; a module may take
    several lines; the life-cycle drawing is not one) -> the modules it is drawn importing."""
    drawings = [b for b in _blocks("architecture.md")
                if all(re.match(r"^[\w/.]+\.py\s+──▶ ", line) for line in b.splitlines())]
    assert len(drawings) >= 2          # a run's way through the layers, the environments
    arrows: dict[str, list[str]] = {}
    for line in (line for d in drawings for line in d.splitlines()):
        left, _, right = line.partition("──▶")
        arrows.setdefault(left.strip(), []).extend(n.strip() for n in right.split(","))
    return arrows


def to_draw(imported: set[Path]) -> set[Path]:
    """Of what a module imports, what its arrows must name: not core/ (every layer's
    vocabulary), not a package's __init__.py when a module inside it is imported too (the
    package is only on the way to it)."""
    core = (PACKAGE / "core").resolve()
    return {p for p in imported if core not in p.parents
            and not (p.name == "__init__.py"
                     and any(q != p and p.parent in q.parents for q in imported))}


def test_each_arrow_of_the_architecture_drawings_is_an_import():
    arrows = drawn_arrows()
    for left, names in arrows.items():
        importer = PACKAGE / left
        assert importer.exists(), left
        for name in names:
            imported = PACKAGE / name
            assert imported.exists(), name
            assert imported.resolve() in _imports(importer), f"{left} -> {name}"
    assert sum(map(len, arrows.values())) >= 50


def test_each_module_drawn_has_all_its_arrows():
    """A module in the drawings is drawn with every import it makes (to_draw): the drawing
    is its whole list, not a sample."""
    missing = {}
    for left, names in drawn_arrows().items():
        drawn = {(PACKAGE / n).resolve() for n in names}
        lacking = to_draw(_imports(PACKAGE / left)) - drawn
        if lacking:
            missing[left] = sorted(str(p.relative_to(PACKAGE.resolve())) for p in lacking)
    assert missing == {}, "draw these imports in docs/architecture.md: " + repr(missing)


def test_an_import_on_the_way_to_a_module_is_not_asked_for(tmp_path):
    """to_draw on made-up paths: core/ and a package passed through are left out."""
    pkg = PACKAGE.resolve()
    imported = {pkg / "core/errors.py", pkg / "machinery/host/__init__.py",
                pkg / "machinery/host/net/__init__.py", pkg / "machinery/host/net/netns.py",
                pkg / "foundations/store/__init__.py"}
    assert to_draw(imported) == {pkg / "machinery/host/net/netns.py",
                                 pkg / "foundations/store/__init__.py"}
