"""Functions stay short enough to read at once: at most MAX_LONG functions of virtbench/ (the
store's Alembic revisions aside) run over LONG lines (issue 38's measure: 12 did; the five
left draw a chart or a whole page and read top to bottom). A new long function fails here;
shorten it by meaning (named steps), or, when it must be long, say why in LONG_ONES."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "virtbench"
LONG = 60
MAX_LONG = 5

# path:function -> why it stays long (each still long, or the test says to take it out)
LONG_ONES = {
    "results/report/historychart.py:series_figure": "one plotly figure: points, intervals, "
                                                    "change points, the noise floor",
    "results/report/formats/html.py:render": "the run's page: every section in page order",
    "results/report/formats/csv.py:to_csv": "one row per result, its columns in order",
    "results/report/charts.py:bar_figure": "one plotly figure of values with intervals",
    "results/report/ratios.py:figure": "one plotly figure of ratios on a log scale",
}


def long_functions(root: Path = ROOT, limit: int = LONG) -> dict[str, int]:
    """path:function (nested functions by their own name) -> lines, for those over `limit`."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        if "revisions" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > limit:
                    found[f"{path.relative_to(root)}:{node.name}"] = lines
    return found


def test_at_most_five_functions_run_over_sixty_lines():
    found = long_functions()
    assert len(LONG_ONES) <= MAX_LONG
    assert sorted(set(found) - set(LONG_ONES)) == [], \
        f"over {LONG} lines: {found}; shorten by meaning"
    assert sorted(set(LONG_ONES) - set(found)) == [], "short now: take it out of LONG_ONES"


def test_the_count_reads_the_source(tmp_path):
    (tmp_path / "m.py").write_text("def short():\n    pass\n\n\ndef long():\n"
                                   + "    x = 1\n" * 61 + "\n\nclass C:\n    def m(self):\n"
                                   + "        y = 2\n" * 61)
    assert long_functions(tmp_path) == {"m.py:long": 62, "m.py:m": 62}
