"""A package holds at most MAX_MODULES modules (.py files directly in it, __init__.py
included): past that, it is split into sub-packages by what its modules mean, each with a
docstring saying what it holds (issue 38; measure/environments/qemu/ was 26).

A package that cannot be split yet goes into WAITING with its reason; one that fits again
fails the test, so the list stays true."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MAX_MODULES = 15

WAITING: dict[str, str] = {}     # empty: every package fits


def sizes(root: Path = REPO / "virtbench") -> dict[str, int]:
    """Each package under `root` (a directory with __init__.py) -> its module count."""
    return {str(d.relative_to(root.parent)): len(list(d.glob("*.py")))
            for d in [root, *root.rglob("*")] if (d / "__init__.py").is_file()}


def too_big(counts: dict[str, int]) -> dict[str, int]:
    return {pkg: n for pkg, n in counts.items() if n > MAX_MODULES}


def test_no_package_holds_more_than_fifteen_modules():
    big = too_big(sizes())
    assert {p: n for p, n in big.items() if p not in WAITING} == {}, \
        "split these into sub-packages by meaning"
    assert set(WAITING) <= set(big), "these fit now: take them out of WAITING"


def test_every_package_says_what_it_holds():
    root = REPO / "virtbench"
    silent = [str(d.relative_to(REPO)) for d in [root, *root.rglob("*")]
              if (d / "__init__.py").is_file()
              and not (d / "__init__.py").read_text().lstrip().startswith(('"""', "'''"))]
    assert silent == []


def test_the_count_is_of_the_files_directly_in_the_package(tmp_path):
    pkg = tmp_path / "virtbench"
    (pkg / "sub").mkdir(parents=True)
    for name in ["__init__.py", *(f"m{i}.py" for i in range(15))]:
        (pkg / name).write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "x.py").write_text("")
    (pkg / "data.txt").write_text("")
    assert sizes(pkg) == {"virtbench": 16, "virtbench/sub": 2}
    assert too_big(sizes(pkg)) == {"virtbench": 16}
