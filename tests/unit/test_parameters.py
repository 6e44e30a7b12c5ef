"""No function of virtbench/ takes more than MAX_PARAMETERS parameters (COMMON rules; issue
38): what a function is asked with more is one typed request (study/flagset.py StudyFlags,
execution/run/density.py DensityRequest, store/record.py TrialRecord, results/history/
request.py HistoryRequest). Read with ast: functions, methods, nested functions and lambdas;
`self` or `cls` first is not counted, *args and **kwargs are. The store's Alembic revisions
are not virtbench's own code (their functions are Alembic's).

A function another change fixes goes into WAITING with its reason; one that fits again fails
the test, so the list stays true."""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "virtbench"
MAX_PARAMETERS = 8
REVISIONS = "virtbench/foundations/store/revisions"

# "path:function": reason. Empty: every function fits.
WAITING: dict[str, str] = {}     # empty: every function takes 8 parameters at most


def parameters(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> int:
    args = node.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    own = 1 if names and names[0] in ("self", "cls") and not isinstance(node, ast.Lambda) \
        else 0
    return len(names) - own + (args.vararg is not None) + (args.kwarg is not None)


@lru_cache(maxsize=None)
def too_many(root: Path = ROOT) -> dict[str, int]:
    """"path:function" -> its parameter count, of every function over MAX_PARAMETERS."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        where = str(path.relative_to(root.parent))
        if where.startswith(REVISIONS + "/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                n = parameters(node)
                if n > MAX_PARAMETERS:
                    found[f"{where}:{getattr(node, 'name', f'lambda@{node.lineno}')}"] = n
    return found


def test_the_scan_counts_what_a_caller_passes(tmp_path):
    pkg = tmp_path / "virtbench"
    (pkg / "foundations/store/revisions/versions").mkdir(parents=True)
    (pkg / "m.py").write_text(
        "def nine(a, b, c, d, e, f, g, h, i):\n    pass\n"
        "def eight(a, b, c, d, e, f, g, *, h):\n    pass\n"
        "class C:\n"
        "    def method(self, a, b, c, d, e, f, g, h):\n        pass\n"
        "    def many(self, a, b, c, d, e, f, g, *rest, **more):\n        pass\n"
        "late = lambda self, a, b, c, d, e, f, g, h: None\n")
    (pkg / "foundations/store/revisions/versions/0001_x.py").write_text(
        "def upgrade(a, b, c, d, e, f, g, h, i):\n    pass\n")
    assert too_many(pkg) == {"virtbench/m.py:nine": 9, "virtbench/m.py:many": 9,
                             "virtbench/m.py:lambda@10": 9}


def test_no_function_takes_more_than_eight_parameters():
    over = {where: n for where, n in too_many().items() if where not in WAITING}
    assert over == {}, "ask with one typed request (a dataclass) instead: " + \
        ", ".join(f"{w} ({n})" for w, n in sorted(over.items()))


def test_every_waiting_function_still_takes_too_many():
    fits = sorted(set(WAITING) - set(too_many()))
    assert fits == [], f"these fit now; remove them from WAITING: {fits}"
