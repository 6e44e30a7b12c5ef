"""The JSON Schema of the report, generated from the model, and its field-by-field page.

    python -m virtbench.foundations.model --schema > docs/report.schema.json
    python -m virtbench.foundations.model --doc > docs/report-schema.md

tests/unit/model/test_report_schema.py fails when either differs from what the model generates.
The schema's root is the run report (`virtbench report --format json`); `$defs` holds the
others: ProfilesReport (`report --profile`), Comparison (`virtbench compare`) and
DensityReport (`virtbench density`).
"""
from __future__ import annotations

import json

from pydantic.json_schema import models_json_schema

from .compare import Comparison
from .density import DensityReport
from .run import SCHEMA_VERSION, ProfilesReport, RunReport

TOP = (RunReport, ProfilesReport, Comparison, DensityReport)


def report_schema() -> dict:
    """The whole schema (Draft 2020-12), the run report at its root."""
    _, defs = models_json_schema([(m, "serialization") for m in TOP],
                                 ref_template="#/$defs/{model}")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "virtbench report",
            "description": "virtbench report --format json (the root); $defs/ProfilesReport: "
                           "report --profile --format json; $defs/Comparison: virtbench "
                           "compare --format json; $defs/DensityReport: virtbench "
                           "density --format json. Generated from virtbench/foundations/model: "
                           "python -m virtbench.foundations.model --schema",
            "version": SCHEMA_VERSION,
            "$ref": "#/$defs/RunReport",
            "$defs": defs["$defs"]}


def schema_text() -> str:
    return json.dumps(report_schema(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def _type(prop: dict | bool) -> str:
    if not isinstance(prop, dict) or not prop:
        return "any"
    if "$ref" in prop:
        return prop["$ref"].rsplit("/", 1)[1]
    if "const" in prop:
        return json.dumps(prop["const"], ensure_ascii=False)
    if "enum" in prop:
        return " | ".join(json.dumps(v, ensure_ascii=False) for v in prop["enum"])
    if "anyOf" in prop:
        return " or ".join(_type(p) for p in prop["anyOf"])
    kind = prop.get("type", "any")
    if kind == "array":
        return f"list of {_type(prop.get('items', {}))}"
    if kind == "object" and isinstance(prop.get("additionalProperties"), dict):
        return f"object of {_type(prop['additionalProperties'])}"
    return kind


def doc_text() -> str:
    """docs/report-schema.md: every object of the schema, every field with its meaning."""
    schema = report_schema()
    out = ["# The JSON report, field by field", "",
           f"Schema version {SCHEMA_VERSION} (`run.schema_version`); the schema itself is "
           "[report.schema.json](report.schema.json). Generated from `virtbench/foundations/model` by "
           "`python -m virtbench.foundations.model --doc`: edit the model's descriptions, not this page.",
           "", "`virtbench report --format json` writes a RunReport; `report --profile "
           "--format json` a ProfilesReport; `virtbench compare --format json` a Comparison; "
           "`virtbench density --format json` a DensityReport. "
           "Every field is always written (null when it has no value).", ""]
    for name, definition in schema["$defs"].items():
        out += [f"## {name}", "", definition.get("description", "").strip(), "",
                "| field | type | meaning |", "| --- | --- | --- |"]
        for field, prop in definition.get("properties", {}).items():
            meaning = prop.get("description", "").replace("|", "\\|").replace("\n", " ")
            out.append(f"| `{field}` | {_type(prop).replace('|', chr(92) + '|')} | {meaning} |")
        out.append("")
    return "\n".join(out)
