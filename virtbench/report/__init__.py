"""Reports: one module per output format, all rendering the dict from analysis.analyze_run."""
from __future__ import annotations

from ..errors import VirtbenchError
from . import export, markdown, terminal

FORMATS = ("table", "markdown", "json", "csv", "html")


def render(analysis: dict, fmt: str) -> str:
    if fmt == "table":
        return terminal.render_text(analysis)
    if fmt == "markdown":
        return markdown.render(analysis)
    if fmt == "json":
        return export.to_json(analysis)
    if fmt == "csv":
        return export.to_csv(analysis)
    if fmt == "html":
        from . import html        # plotly is only needed for this format
        return html.render(analysis)
    raise VirtbenchError(f"unknown report format {fmt!r}; use one of: {', '.join(FORMATS)}")


def render_profiles(analysis: dict, fmt: str) -> str:
    """Only the run's exit profiles (`virtbench report --profile`)."""
    from .profiles import only_profiles
    if fmt == "table":
        return terminal.render_profiles_text(analysis)
    if fmt == "markdown":
        return markdown.render_profiles(analysis)
    if fmt == "json":
        return export.to_json(only_profiles(analysis))
    if fmt == "csv":
        return export.profiles_to_csv(analysis)
    if fmt == "html":
        from . import html_profiles
        return html_profiles.render_profiles(analysis)
    raise VirtbenchError(f"unknown report format {fmt!r}; use one of: {', '.join(FORMATS)}")


def render_compare(comparison: dict, fmt: str) -> str:
    if fmt == "table":
        return terminal.render_compare_text(comparison)
    if fmt == "markdown":
        return markdown.render_compare(comparison)
    if fmt == "json":
        return export.to_json(comparison)
    if fmt == "csv":
        return export.compare_to_csv(comparison)
    if fmt == "html":
        from . import html_compare
        return html_compare.render_compare(comparison)
    raise VirtbenchError(f"unknown report format {fmt!r}; use one of: {', '.join(FORMATS)}")
