"""The docs keep up with the tree: docs/architecture.md names every package of virtbench/,
docs/index.md links every page of docs/, the README stays a quick start (at most 200 lines,
its two commands in its first 30), and no file of the repository points outside it.

Everything is computed from the tree (the packages, the pages, the files); nothing here lists
a package or a page by name."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest


def _repo() -> Path:
    """The repository's root: the nearest directory above this file with pyproject.toml and
    virtbench/ (so the test holds wherever under tests/ it sits)."""
    for parent in Path(__file__).resolve().parents:
        if (parent / "pyproject.toml").is_file() and (parent / "virtbench").is_dir():
            return parent
    raise AssertionError("no repository root above " + str(Path(__file__)))


REPO = _repo()
PACKAGE = REPO / "virtbench"
DOCS = REPO / "docs"

README_MAX_LINES = 200
README_TOP_LINES = 30
README_COMMANDS = ("bash scripts/quickstart.sh",
                   "bash scripts/setup.sh --all && .venv/bin/python -m pytest -q --run-nested")

# Pages the index need not link: pictures and machine-readable files (the JSON schema).
NOT_PAGES = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".json"}

# What a reference outside the repository looks like (split so this file does not match).
OUTSIDE = ("..", "/shared")
OUTSIDE_PATTERNS = ("".join(OUTSIDE), "/work" + "/shared/")

SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", ".pytest_cache", "node_modules", ".mypy_cache"}


def packages() -> list[str]:
    """The layer packages of virtbench/ and the packages in them (`results/analysis`):
    directories holding an __init__.py, two levels deep."""
    found = []
    for layer in PACKAGE.iterdir():
        if layer.is_dir() and (layer / "__init__.py").is_file():
            found.append(layer.name)
            found += [f"{layer.name}/{p.name}" for p in layer.iterdir()
                      if p.is_dir() and (p / "__init__.py").is_file()]
    return sorted(found)


def named_in(text: str, package: str) -> bool:
    """`package/` (or `virtbench/package`, `virtbench.package`) appears as a path or a name;
    `package` is a path under virtbench/ (`results/analysis`)."""
    dotted = package.replace("/", ".")
    return re.search(rf"(?<![\w.-]){re.escape(package)}/|virtbench/{re.escape(package)}\b|"
                     rf"virtbench\.{re.escape(dotted)}\b", text) is not None


def pages() -> list[Path]:
    """Every file of docs/ (any depth) a reader opens: not pictures, not JSON, not the index."""
    out = []
    for path in DOCS.rglob("*"):
        if not path.is_file() or path.suffix.lower() in NOT_PAGES:
            continue
        if path == DOCS / "index.md" or any(part.startswith(".") for part in path.parts):
            continue
        out.append(path)
    return sorted(out)


def linked_from(page: Path) -> set[Path]:
    """The files a Markdown page links to (inline links and reference definitions), resolved."""
    text = page.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", text)
    targets += re.findall(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", text, re.M)
    out = set()
    for target in targets:
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):       # http:, mailto: ...
            continue
        path = target.split("#", 1)[0]
        if path:
            out.add((page.parent / path).resolve())
    return out


def repository_files() -> list[Path]:
    """The repository's files: what git tracks (and new files it does not ignore); without
    git, every file under the root but caches and virtual environments."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO, capture_output=True, timeout=60, check=True).stdout
        names = sorted({n for n in listed.decode("utf-8", "surrogateescape").split("\0") if n})
        return [REPO / n for n in names if (REPO / n).is_file()]
    except (OSError, subprocess.SubprocessError):
        out = []
        for root, dirs, files in os.walk(REPO):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
            out += [Path(root) / f for f in files]
        return sorted(out)


def text_of(path: Path) -> str | None:
    """A file's text, or None for a binary file."""
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


# -- the tests ---------------------------------------------------------------------------------

def test_the_tree_has_packages_and_pages():
    # the checks below are only as good as what they find
    assert len(packages()) >= 5, packages()
    assert (DOCS / "architecture.md").is_file() and (DOCS / "index.md").is_file()
    assert len(pages()) >= 5


def test_architecture_names_every_package():
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    missing = [p for p in packages() if not named_in(text, p)]
    assert not missing, (f"docs/architecture.md does not name the package(s) {missing} of "
                         "virtbench/: add each to the layers with a line of what it is for")


def test_the_index_links_every_page():
    linked = linked_from(DOCS / "index.md")
    missing = [str(p.relative_to(REPO)) for p in pages() if p.resolve() not in linked]
    assert not missing, f"docs/index.md does not link {missing}: add a line for each"


def test_the_index_links_only_what_exists():
    broken = [str(p) for p in linked_from(DOCS / "index.md") if not p.exists()]
    assert not broken, f"docs/index.md links files that do not exist: {broken}"


def test_the_readme_is_a_quick_start():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines, more than {README_MAX_LINES}: move the detail "
        "into docs/ (and link it from docs/index.md)")
    top = lines[:README_TOP_LINES]
    for command in README_COMMANDS:
        assert any(line.strip() == command or f"`{command}`" in line for line in top), (
            f"README.md's first {README_TOP_LINES} lines do not hold the command {command!r}")


def test_no_file_points_outside_the_repository():
    found = []
    for path in repository_files():
        text = text_of(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if any(p in line for p in OUTSIDE_PATTERNS):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:120]}")
    assert not found, ("these lines point outside the repository (the contract is "
                       "docs/contract.md):\n" + "\n".join(found))


@pytest.mark.parametrize("text, package, named", [
    ("| execution/run/ | the runner |", "execution/run", True),
    ("`virtbench/execution/run/runner.py`", "execution/run", True),
    ("virtbench.execution.run", "execution/run", True),
    ("| run/ | the runner |", "execution/run", False),
    ("a rerun/ of it", "execution/run", False),
    ("the runner runs", "execution", False),
    ("machinery/vmlife/phases.py", "machinery/life", False),
])
def test_named_in(text, package, named):
    assert named_in(text, package) is named


def test_links_are_read_as_a_reader_follows_them(tmp_path):
    page = tmp_path / "index.md"
    page.write_text("[a](a.md) [b](sub/b.md#part) [web](https://example.org/x.md)\n"
                    "[c]: c.md\n")
    assert linked_from(page) == {(tmp_path / n).resolve() for n in ("a.md", "sub/b.md", "c.md")}
