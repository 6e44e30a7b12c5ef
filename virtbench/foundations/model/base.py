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
