"""The JSON report (`--format json`): the result model as it is, its schema in
docs/report.schema.json (docs/report-schema.md says what each field means)."""
from __future__ import annotations

import json

from ....foundations.model import Comparison, Record, RunReport
from ..exporter import Exporter
from ..profiles import only_profiles


def to_json(data: Record) -> str:
    """A record as indented JSON (NaN, when a statistic is one, as Python's json writes it)."""
    return json.dumps(data.model_dump(), indent=2, ensure_ascii=False, default=str) + "\n"


class JsonExporter(Exporter):
    def render(self, report: RunReport, verbosity: str = "normal") -> str:
        return to_json(report)        # every warning and the grouped view, whatever the verbosity

    def render_profiles(self, report: RunReport) -> str:
        return to_json(only_profiles(report))

    def render_compare(self, comparison: Comparison) -> str:
        return to_json(comparison)

    def render_density(self, report) -> str:
        return to_json(report)

    def render_history(self, report) -> str:
        return to_json(report)
