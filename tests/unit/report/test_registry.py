"""Report formats are exporters registered by name: the CLI lists them without importing any,
a format's module is imported when it is used, and a new format is one file plus one line
(the diff in docs/reports.md, run here as it is written there)."""
from __future__ import annotations

import re
import subprocess
import sys
import types
from pathlib import Path

import pytest
from reportkit import fill_store, study_dict

from virtbench.interface.cli import commands as cli
from virtbench.results import report
from virtbench.core.errors import VirtbenchError
from virtbench.results.report import registry
from virtbench.results.report.exporter import Exporter
from virtbench.foundations.store import Store

DOCS = Path(__file__).resolve().parents[3] / "docs" / "reports.md"


def test_every_registered_format_is_an_exporter_with_every_form():
    assert report.FORMATS == ("table", "markdown", "json", "csv", "html", "latex")
    for name in report.FORMATS:
        made = registry.load(name)
        assert isinstance(made, Exporter) and made.name == name
        forms = ("render", "render_compare") + (() if name == "latex" else ("render_profiles",))
        for form in forms:          # latex: a paper's tables, no form for exit profiles
            assert getattr(type(made), form) is not getattr(Exporter, form), (name, form)
    with pytest.raises(VirtbenchError, match="unknown report format 'pdf'; use one of: table"):
        registry.load("pdf")


def test_listing_formats_imports_none_and_a_format_imports_only_what_it_needs(tmp_path):
    code = (
        "import sys\n"
        "from virtbench.results import report\n"
        "assert report.FORMATS\n"
        "heavy = ('plotly', 'jinja2', 'rich', 'pydantic', 'virtbench.results.report.formats')\n"
        "print(sorted({m.split('.')[0] if not m.startswith('virtbench') else m\n"
        "              for m in sys.modules if m.startswith(heavy)}))\n"
        "from virtbench.foundations.model import RunReport\n"
        "report.render(RunReport(), 'markdown')\n"
        "print(sorted(m for m in ('plotly', 'jinja2') if m in sys.modules))\n"
        "report.render(RunReport(), 'html')\n"
        "print(sorted(m for m in ('plotly', 'jinja2') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[]", "[]", "['jinja2', 'plotly']"]


def _docs_diff() -> tuple[str, str]:
    """The new file and the registry line of docs/reports.md's "Adding a report format"."""
    text = DOCS.read_text()
    diff = text[text.index("## Adding a report format"):]
    diff = diff[diff.index("```diff\n") + 8:]
    diff = diff[:diff.index("```")]
    new_file, registry_part = diff.split("--- a/virtbench/results/report/registry.py")
    source = "\n".join(line[1:] for line in new_file.splitlines() if line.startswith("+")
                       and not line.startswith("+++"))
    (line,) = [x[1:].strip() for x in registry_part.splitlines()
               if x.startswith("+") and not x.startswith("+++")]
    return source, line


def test_the_docs_new_format_is_one_file_and_one_line(tmp_path, monkeypatch, capsys):
    source, line = _docs_diff()
    name, target = re.fullmatch(r'"(\w+)": "([\w:]+)",', line).groups()
    module = types.ModuleType("virtbench.results.report.formats.tsv")
    module.__package__ = "virtbench.results.report.formats"
    exec(compile(source, "docs/reports.md (tsv.py)", "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, "virtbench.results.report.formats.tsv", module)
    monkeypatch.setitem(registry.REGISTRY, name, target)
    monkeypatch.setattr(report, "FORMATS", tuple(registry.REGISTRY))
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    run = fill_store(store, study_dict())
    assert cli.main(["report", run, "--format", "tsv", "--store", store.url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split("\t") == ["environment", "benchmark", "metric", "trimmed_mean",
                                    "overhead_pct", "verdict"]
    assert len(lines) == 1 + 4 * 3                 # 4 metrics x 3 environments
    tcg = next(x.split("\t") for x in lines if x.startswith("qemu-tcg/ide/e1000\thimeno"))
    assert tcg[5].startswith("✗ fail") and tcg[4].startswith("+")
    assert cli.main(["report", run, "--profile", "--format", "tsv",
                     "--store", store.url]) == 2
    assert "format tsv has no form for exit profiles" in capsys.readouterr().err
