"""The parser is built by meaning (issue 38): one function per subcommand's parser, each
under MAX_LINES lines, build_parser only putting them together."""
from __future__ import annotations

import ast
from pathlib import Path

PARSER = Path(__file__).resolve().parents[3] / "virtbench" / "interface" / "cli" / "parser.py"
MAX_LINES = 60


def lengths(source: str) -> dict[str, int]:
    return {n.name: n.end_lineno - n.lineno + 1 for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.FunctionDef)}


def test_the_count_is_of_a_functions_lines():
    assert lengths("def f():\n    x = 1\n\n    return x\n") == {"f": 4}


def test_every_function_of_the_parser_is_under_sixty_lines():
    long = {name: n for name, n in lengths(PARSER.read_text()).items() if n >= MAX_LINES}
    assert long == {}
    assert lengths(PARSER.read_text())["build_parser"] < 20      # it only puts them together
