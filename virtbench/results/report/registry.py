"""The report formats by name: `--format NAME` picks one. A format's module is imported only
when it is used (the HTML one loads plotly and Jinja2), so listing the names costs nothing.

A new format is one file in virtbench/results/report/formats/ with an Exporter subclass, and one
line here (docs/reports.md, "Adding a report format").
"""
from __future__ import annotations

from importlib import import_module

from ...core.errors import VirtbenchError

# name -> "module in virtbench.results.report.formats:class"
REGISTRY: dict[str, str] = {
    "table": "table:TableExporter",
    "markdown": "markdown:MarkdownExporter",
    "json": "json:JsonExporter",
    "csv": "csv:CsvExporter",
    "html": "html:HtmlExporter",
    "latex": "latex:LatexExporter",
}

FORMATS: tuple[str, ...] = tuple(REGISTRY)


def load(name: str):
    """The Exporter registered as `name` (a one-line error for an unknown one)."""
    if name not in REGISTRY:
        raise VirtbenchError(f"unknown report format {name!r}; use one of: {', '.join(FORMATS)}")
    module, _, cls = REGISTRY[name].partition(":")
    made = getattr(import_module(f"virtbench.results.report.formats.{module}"), cls)()
    made.name = name
    return made
