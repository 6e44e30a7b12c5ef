"""The base of every record of the result model: a pydantic model that also reads as the
mapping the JSON report is (`row["metric"]`, `"power" in vs`, `row.get("published")`), so
that a script or test written against the JSON's keys keeps working on the model.

Input is lenient, output is whole: every field has a default, so a partial record (a
hand-written analysis, an older JSON report) is read; every field is always written, and
the JSON Schema (serialization mode) requires each one.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, WithJsonSchema

# a number given by the study or the user (10 or 10.0): kept as given, integer or not
Number = Annotated[int | float, WithJsonSchema({"type": "number"})]


class Record(BaseModel):
    model_config = ConfigDict(extra="ignore", validate_assignment=True,
                              json_schema_serialization_defaults_required=True)

    @classmethod
    def of(cls, value):
        """`value` as this model: itself, or read from a mapping (a JSON report's object)."""
        return value if isinstance(value, cls) else cls.model_validate(value)

    # -- read as a mapping ------------------------------------------------------------
    def _names(self) -> list[str]:
        return list(type(self).model_fields) + list(self.__pydantic_extra__ or {})

    def __getitem__(self, key: str) -> Any:
        if key in type(self).model_fields:
            return getattr(self, key)
        extra = self.__pydantic_extra__ or {}
        if key in extra:
            return extra[key]
        raise KeyError(key)

    def __setitem__(self, key: str, value: Any) -> None:
        setattr(self, key, value)

    def __contains__(self, key: object) -> bool:
        return key in self._names()

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def keys(self) -> list[str]:
        return self._names()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self.model_dump() == dict(other)
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]


# the version of the report's schema (docs/report.schema.json): the minor part grows when
# fields are added, the major part when a field changes or goes (2.0: verdicts are the
# decisions of docs/decisions.md, from the paired analysis of the blocks by default; 2.1:
# price_lists; 3.0: the published studies' rule is `published_rule`, was `seed_rule`; 3.1:
# headline, verdict_p and verdict_p_adjusted; adaptive resolution_pct and unresolved;
# warning_groups, warnings[].detail; 3.2: differences, vs_baseline.differs_in,
# run.kernels_build, compare's differences; 3.4: density (a density sweep's run),
# run.density_sweep, DensityReport.run_id, stop reason interrupted; declared, the study's
# own figures and tables)
SCHEMA_VERSION = "3.4"


def read_schema_version(value):
    """A report of the same major version reads as this one (minor versions only add
    fields, which every record defaults); another major version stays as given and fails."""
    if isinstance(value, str) and value.split(".")[0] == SCHEMA_VERSION.split(".")[0]:
        return SCHEMA_VERSION
    return value
