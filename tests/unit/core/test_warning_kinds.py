"""One catalogue of warnings (virtbench/core/warning_kinds.py): every kind emitted anywhere in the
package is in it, every entry is emitted somewhere and documented in docs/warnings.md, the
messages have the form it gives, and reports carry each warning's severity and anchor."""
from __future__ import annotations
import ast
import json
import re
from pathlib import Path
import pytest
from runkit import Flaky, Quiet, run_study
from virtbench.results import analysis, report
from virtbench.core import warning_kinds
from virtbench.core.warning_kinds import CATALOGUE, SEVERITIES
from virtbench.foundations.store import Store

ROOT = Path(__file__).resolve().parents[3]

PACKAGE = ROOT / "virtbench"

KIND = re.compile(r"^[a-z][a-z0-9_-]*$")


def _text(node) -> str:
    return ast.unparse(node) if node is not None else ""


def emitted_kinds(source: str) -> list[tuple[int, str]]:
    """(line, kind) of every warning kind written as a literal where a warning is made: the
    kind argument of add_warning / warn_once / _once and of RunWarning(kind=...), the "kind"
    of a {kind, message} dict, and the first item of a (kind, message) pair appended to
    something's warnings, or listed or appended in a function that makes warnings (its name
    says warning, or it returns list[tuple[str, str]])."""
    found = []

    def literal(node):
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
            else None

    def pairs(nodes) -> list[tuple[int, str]]:
        """(kind, message) pairs among `nodes`: a literal kind and a text (not a number)."""
        return [(n.lineno, literal(n.elts[0])) for n in nodes
                if isinstance(n, ast.Tuple) and len(n.elts) == 2 and literal(n.elts[0])
                and KIND.match(literal(n.elts[0]))
                and not (isinstance(n.elts[1], ast.Constant)
                         and not isinstance(n.elts[1].value, str))]

    def visit(node, in_warning_fn: bool):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_warning_fn = "warning" in node.name or \
                _text(node.returns).replace(" ", "") == "list[tuple[str,str]]"
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else \
                getattr(node.func, "id", "")
            position = {"add_warning": 1, "warn_once": 0, "_once": 0}.get(name)
            kinds = [kw.value for kw in node.keywords if kw.arg == "kind"
                     and (position is not None or name == "RunWarning")]
            if position is not None and len(node.args) > position:
                kinds.append(node.args[position])
            found.extend((node.lineno, literal(k)) for k in kinds if literal(k))
            if name == "append" and ("warnings" in _text(node.func.value) or in_warning_fn):
                found.extend(pairs(node.args))
        if isinstance(node, ast.List) and in_warning_fn:
            found.extend(pairs(node.elts))
        if isinstance(node, ast.Dict):
            keys = [literal(k) for k in node.keys]
            if "kind" in keys and "message" in keys and literal(node.values[keys.index("kind")]):
                found.append((node.lineno, literal(node.values[keys.index("kind")])))
        for child in ast.iter_child_nodes(node):
            visit(child, in_warning_fn)

    visit(ast.parse(source), False)
    return found


def _emitted() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, kind in emitted_kinds(path.read_text()):
            out.setdefault(kind, []).append(f"{path.relative_to(ROOT)}:{line}")
    return out


def test_every_kind_emitted_is_in_the_catalogue_and_every_entry_is_emitted():
    emitted = _emitted()
    unknown = {k: v for k, v in emitted.items() if k not in CATALOGUE}
    assert unknown == {}, ("warning kinds missing from virtbench/core/warning_kinds.py (add them, "
                           f"then regenerate docs/warnings.md): {unknown}")
    assert sorted(set(CATALOGUE) - set(emitted)) == [], "catalogue entries nothing emits"


@pytest.mark.parametrize("source, kinds", [
    ('store.add_warning(run, "new_kind", "m", environment=e)\n', ["new_kind"]),
    ('self.warn_once("w1", msg, label, None)\ndef f(self):\n    return self._once("w2", b, m)\n',
     ["w1", "w2"]),
    ('RunWarning(kind="w3", message="m")\nx = {"kind": "w4", "message": "m"}\n', ["w3", "w4"]),
    ('trial.warnings.append(("w5", f"{x} failed"))\n', ["w5"]),
    ('def extra_warnings(self, text):\n    return [("w6", "m")] if text else []\n', ["w6"]),
    ('def check(self) -> list[tuple[str, str]]:\n    return [("w7", text)]\n', ["w7"]),
    # not warnings: a kind of environment, a pair of numbers, a table's columns
    ('e = {"label": l, "kind": "qemu"}\ndef warnings(self):\n    return [("x", 1)] if '
     'k not in ("id", "run_id") else []\ncols = [("environment", "left")]\n', []),
])
def test_the_scan_finds_a_new_kind_in_every_shape_a_warning_is_made(source, kinds):
    assert [k for _, k in emitted_kinds(source)] == kinds


def test_every_entry_is_complete_and_the_page_is_the_catalogues():
    for code, kind in CATALOGUE.items():
        assert kind.code == code and kind.severity in SEVERITIES
        assert kind.message and kind.source and kind.meaning, code
    page = (ROOT / "docs" / "warnings.md").read_text()
    assert page == warning_kinds.doc_text(), ("docs/warnings.md is not the catalogue's; "
                                              "regenerate it: python -m virtbench.core.warning_kinds"
                                              " > docs/warnings.md")
    headings = re.findall(r"^## (\S+)$", page, re.M)
    assert headings == list(CATALOGUE)


def test_reports_carry_each_warnings_severity_and_documentation(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    out = run_study(store, [Quiet("a")], {"flaky": Flaky(fail_on={2})}, trials=3)
    store.add_warning(out.run_id, "retired_kind", "from an older virtbench")
    doc = json.loads(report.render(analysis.analyze_run(store, out.run_id), "json"))
    by_kind = {w["kind"]: w for w in doc["warnings"]}
    assert by_kind["failed_trials"]["severity"] == "warning"
    assert by_kind["failed_trials"]["doc"] == "docs/warnings.md#failed_trials"
    assert by_kind["few_samples"]["severity"] == "warning"
    assert (by_kind["retired_kind"]["severity"], by_kind["retired_kind"]["doc"]) == (None, None)
    page = report.render(analysis.analyze_run(store, out.run_id), "html")
    assert '<b title="warning: Some trials of an environment x benchmark failed' in page
