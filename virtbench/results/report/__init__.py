"""Reports: every format renders the result model (virtbench/foundations/model) that analysis makes.

registry.py   the formats by name (--format), each imported only when used
exporter.py   what a format implements: render a run, its profiles, a comparison
formats/      one module per format: table, markdown, json, csv, html (templates/)
fmt/          text, a module per what it formats: numbers, verdicts, tables, published, header...
words/        the sentences: how a change is said, the headline, decisions, compare, warnings
figures/      the charts that found no room here: a tune's effects (figures/tunechart.py)
matrix, failures, aggregates, profiles, charts: the other pieces every format shares
"""
from __future__ import annotations

from .registry import FORMATS, load


def render(analysis, fmt: str, view=None) -> str:
    """A run's report (a RunReport, or the JSON report's mapping) in format `fmt`; `view`
    (view.View: --wide, --quiet/--verbose, the width) lays it out."""
    from ...foundations.model import RunReport
    exporter = load(fmt)
    report = RunReport.of(analysis)
    if report.density is not None and fmt != "json":    # a density sweep's run: its sweep
        return exporter.render_density(report.density)
    return exporter.render(report) if view is None else exporter.render_view(report, view)


def render_profiles(analysis, fmt: str) -> str:
    """Only the run's exit profiles (`virtbench report --profile`)."""
    from ...foundations.model import RunReport
    return load(fmt).render_profiles(RunReport.of(analysis))


def render_compare(comparison, fmt: str) -> str:
    """Two runs side by side (`virtbench compare`)."""
    from ...foundations.model import Comparison
    return load(fmt).render_compare(Comparison.of(comparison))


def render_density(report, fmt: str) -> str:
    """A density sweep (`virtbench density`)."""
    from ...foundations.model.density import DensityReport
    return load(fmt).render_density(DensityReport.of(report))


def render_history(report, fmt: str) -> str:
    """Results over time (`virtbench history`)."""
    from ...foundations.model.history import HistoryReport
    return load(fmt).render_history(HistoryReport.of(report))


__all__ = ["FORMATS", "load", "render", "render_profiles", "render_compare", "render_density",
           "render_history"]
