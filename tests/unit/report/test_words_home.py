"""The report layer takes nothing from analysis: the result model (foundations/model) is the
interface, and the words are the report layer's own (report/words/). Read with ast: every
import of every module under virtbench/results/report, lazy ones included."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3] / "virtbench"
REPORT = ROOT / "results" / "report"
ANALYSIS = "virtbench.results.analysis"


def imports(path: Path) -> set[str]:
    """The absolute names `path` imports (relative imports resolved from its package)."""
    module = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts)
    package = module.split(".")[:-1] if path.name != "__init__.py" else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package[:len(package) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            found |= {f"{base}.{a.name}" for a in node.names} | {base}
    return found


def test_imports_are_resolved_as_python_does():
    words = imports(REPORT / "words" / "headline.py")
    assert "virtbench.core.decisions.Decided" in words
    assert "virtbench.results.report.words.change.Said" in words
    assert "virtbench.results.report.words" in imports(REPORT / "matrix.py")


def test_the_report_layer_imports_nothing_from_analysis():
    found = {f"{p.relative_to(ROOT.parent)}: {name}" for p in sorted(REPORT.rglob("*.py"))
             for name in imports(p) if name == ANALYSIS or name.startswith(ANALYSIS + ".")}
    assert found == set(), "the report takes the result model, not analysis:\n" + \
        "\n".join(sorted(found))
