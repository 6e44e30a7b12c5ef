"""What a report format is: one class per format (virtbench/results/report/formats/), registered by
name in registry.py. Each renders the result model (virtbench/foundations/model) to text; none reads the
store or the analysis' dicts.

    render(report)           a run                  `virtbench report --format NAME`
    render_view(report, v)   the same, laid out for view v (--wide, the width): the formats
                             with a compact form (table) override it; the others render all
    render_profiles(report)  a run's exit profiles  `virtbench report --profile --format NAME`
    render_compare(cmp)      two runs side by side  `virtbench compare --format NAME`
    render_density(report)   a density sweep        `virtbench density --format NAME`
    render_history(report)   results over time      `virtbench history --format NAME`

`render` is required; a format that has no form for profiles or comparisons says so in one
line (exit 2) rather than write something else.
"""
from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from ...core.errors import VirtbenchError

if TYPE_CHECKING:
    from ...foundations.model import Comparison, RunReport
    from ...foundations.model.density import DensityReport
    from ...foundations.model.history import HistoryReport
    from .view import View


class Exporter(ABC):
    name: str = ""

    @abstractmethod
    def render(self, report: "RunReport", verbosity: str = "normal") -> str:
        """The run's report; `verbosity` (report/fmt/lists.py VERBOSITIES): quiet, the
        header and the verdicts with the warnings counted; normal, the warnings one line per
        kind; verbose, every warning with its details. A format whose render() takes no
        `verbosity` has one form, whatever --quiet or --verbose say."""

    def render_view(self, report: "RunReport", view: "View") -> str:
        """The run's report laid out for `view` (view.py): its verbosity, for a format
        whose render() takes one; the table also reads --wide and the width."""
        if "verbosity" in inspect.signature(self.render).parameters:
            return self.render(report, verbosity=view.verbosity)
        return self.render(report)

    def render_profiles(self, report: "RunReport") -> str:
        """Only the run's exit profiles."""
        raise VirtbenchError(f"format {self.name} has no form for exit profiles; use "
                             "--format table, markdown, json, csv or html")

    def render_compare(self, comparison: "Comparison") -> str:
        """Two runs side by side."""
        raise VirtbenchError(f"format {self.name} has no form for a comparison; use "
                             "--format table, markdown, json, csv or html")

    def render_density(self, report: "DensityReport") -> str:
        """A density sweep's curves, knees and stop reasons."""
        raise VirtbenchError(f"format {self.name} has no form for a density sweep; use "
                             "--format table, markdown, json, csv, html or latex")

    def render_history(self, report: "HistoryReport") -> str:
        """Runs lined up into series, with the changes found in each."""
        raise VirtbenchError(f"format {self.name} has no form for a history yet; use "
                             "--format table, markdown or json")
