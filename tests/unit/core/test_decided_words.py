"""Classifications are compared through their enums (core/decisions.py), never as strings:
no module of virtbench/ compares a value with a string literal that is one of their words,
or keys a dict literal by one (read with ast)."""
from __future__ import annotations

import ast
from pathlib import Path

from virtbench.core.decisions import ClaimStatus, CompareVerdict, Decided, Direction

ROOT = Path(__file__).resolve().parents[3] / "virtbench"
HOME = ROOT / "core" / "decisions.py"
WORDS = {str(m) for enum in (Decided, CompareVerdict, ClaimStatus, Direction) for m in enum}


def _literals(node: ast.AST) -> list[str]:
    """The string constants `node` is, or holds as a tuple, list or set."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return [x.value for x in items if isinstance(x, ast.Constant) and isinstance(x.value, str)]


def string_classifications(source: str) -> list[tuple[int, str]]:
    """(line, code) of each comparison with, or dict keyed by, a classification's word."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(w in WORDS for side in sides for w in _literals(side)):
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Dict):
            if any(k is not None and w in WORDS for k in node.keys for w in _literals(k)):
                found.append((node.lineno, ast.unparse(node)[:80]))
    return found


def test_the_check_sees_a_string_comparison_and_a_string_keyed_dict():
    assert string_classifications('if vs.verdict == "pass": pass') == [
        (1, "vs.verdict == 'pass'")]
    assert string_classifications('x = r.status in ("holds", "does not hold")')
    assert string_classifications('c = {"fail": 3, "inconclusive": 2}')
    assert string_classifications('if vs.verdict == Decided.PASS: pass') == []
    assert string_classifications('if mode == "paired": pass') == []


def test_no_module_compares_a_classification_as_a_string():
    found = [f"{path.relative_to(ROOT.parent)}:{line}: {code}"
             for path in sorted(ROOT.rglob("*.py")) if path != HOME
             for line, code in string_classifications(path.read_text())]
    assert found == [], "compare through core/decisions.py's enums:\n" + "\n".join(found)
