"""The report's JSON Schema as checked in under docs/, and a validator of it."""
from __future__ import annotations

import pytest

from virtbench.foundations.model.schema import report_schema


jsonschema = pytest.importorskip("jsonschema")   # the test extras install it


def validator(definition: str | None = None):
    schema = report_schema()
    if definition:
        schema = {**schema, "$ref": f"#/$defs/{definition}"}
    return jsonschema.Draft202012Validator(schema)


def errors(document: dict, definition: str | None = None) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator(definition).iter_errors(document)]
