"""Rows read back from the store are input: a person or another tool may have edited them
(`runs.study` not JSON, `trials.detail` a list, `runs.started` not a date, a sample's value
'abc' or 1e999). Every row a Store method returns is read raw (no SQLAlchemy conversion,
which raises on such a value) and validated here against its table's columns: text is text,
numbers are finite numbers, dates are dates, JSON columns hold the JSON they should (an
object; `fleets.hosts` an array), NOT NULL columns hold a value. A row that is not is
DamagedRow: one line naming the run, the row and what is wrong (exit 2).

What the values mean (a study's ranges, say) is the study layer's to check
(virtbench/study/stored.py); this module checks the types only, with pydantic's validator
core (pydantic_core: `virtbench runs` starts without the rest of pydantic)."""
from __future__ import annotations

import json
from datetime import datetime
from functools import cached_property
from typing import Any

import sqlalchemy as sa
from pydantic_core import PydanticCustomError, SchemaValidator, ValidationError
from pydantic_core import core_schema as cs
from sqlalchemy.dialects import sqlite

from ...core.errors import VirtbenchError
from .schema import (boots, environments, fleets, profiles, runs, samples,
                     superseded_trials, trials, warnings)

# the JSON columns that hold an array; every other JSON column holds an object
JSON_ARRAYS = {("fleets", "hosts")}
SHOWN_CHARS = 40         # of a damaged value, in the message


class DamagedRow(VirtbenchError):
    """A row of the store that is not what virtbench wrote: one line naming the run, the row
    and what is wrong, and the fix (exit 2). `run_id`: the run it belongs to (None: a
    fleet's row)."""

    def __init__(self, run_id: str | None, what: str, problem: str):
        self.run_id, self.what, self.problem = run_id, what, problem
        whose = f"run {run_id}" if run_id is not None else "the store"
        super().__init__(f"{whose}: {what} is damaged: {problem}; virtbench never writes "
                         "that (was it edited?): fix the value or restore the store from a "
                         "backup")


def _json_text(value: Any) -> Any:
    """A JSON column's value: SQLite hands back its text (parsed here), PostgreSQL's driver
    the parsed value."""
    if isinstance(value, (str, bytes)):
        try:
            return json.loads(value)
        except ValueError:
            raise PydanticCustomError("json_invalid", "is not JSON") from None
    return value


# SQLite hands a date back as the text SQLAlchemy wrote; read by SQLAlchemy's own parser
_SQLITE_DATE = sqlite.DATETIME().result_processor(sqlite.dialect(), None)


def _date(value: Any) -> Any:
    """A date column's value: SQLite hands back text (parsed as SQLAlchemy parses it),
    PostgreSQL a datetime; a number is no date (SQLAlchemy never writes one)."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise PydanticCustomError("date_type", "is not a date")
    try:
        return _SQLITE_DATE(value)
    except (ValueError, TypeError):
        raise PydanticCustomError("date_type", "is not a date") from None


def _flag(value: Any) -> bool:
    """A boolean column's value: SQLite hands back 0 or 1, PostgreSQL a bool."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise PydanticCustomError("bool_type", "must be true or false (1 or 0)")


def _schema(table: str, column: sa.Column) -> cs.CoreSchema:
    """What a value of `column` must be (pydantic_core's schema)."""
    kind = column.type
    if isinstance(kind, sa.JSON):
        held = cs.list_schema() if (table, column.name) in JSON_ARRAYS else \
            cs.dict_schema(cs.str_schema(), cs.any_schema())
        # parsed first: SQLAlchemy writes a None of a JSON column as the text 'null'
        return cs.no_info_before_validator_function(
            _json_text, cs.nullable_schema(held) if column.nullable else held)
    if isinstance(kind, sa.DateTime):
        out = cs.no_info_plain_validator_function(_date)
    elif isinstance(kind, sa.Boolean):
        out = cs.no_info_plain_validator_function(_flag)
    elif isinstance(kind, sa.Integer):
        out = cs.int_schema()
    elif isinstance(kind, sa.Float):
        out = cs.float_schema(allow_inf_nan=False)
    else:
        out = cs.str_schema(strict=True)
    return cs.nullable_schema(out) if column.nullable else out


class Shape:
    """What a select reads, as (name, column) pairs, and how its rows are checked: made once
    per select (store/core.py), its validator built when first used."""

    def __init__(self, *tables_or_columns: sa.Table | sa.Column, **named: sa.Column):
        pairs: list[tuple[str, sa.Column]] = []
        for item in tables_or_columns:
            pairs += [(c.key, c) for c in item.columns] if isinstance(item, sa.Table) \
                else [(item.key, item)]
        self.pairs = tuple(pairs + list(named.items()))

    @cached_property
    def _validator(self) -> SchemaValidator:
        return SchemaValidator(cs.typed_dict_schema(
            {name: cs.typed_dict_field(_schema(c.table.name, c)) for name, c in self.pairs}))

    def columns(self) -> list:
        """The select's columns, handing back what the database holds (SQLAlchemy's own
        conversion raises on a damaged value, for the whole result)."""
        return [sa.type_coerce(c, sa.types.NullType()).label(name) for name, c in self.pairs]

    def check(self, row: sa.Row | dict, run_id: str | None, what: str) -> dict:
        """The raw `row` as validated values (a dict), or DamagedRow naming `what` (e.g.
        "its trials row 12") and the first thing wrong."""
        data = dict(row._mapping) if isinstance(row, sa.Row) else dict(row)
        try:
            return self._validator.validate_python(data)
        except ValidationError as exc:
            raise DamagedRow(run_id, what, problem_of(exc.errors()[0], data)) from None


WORDS = {"dict_type": "must be a JSON object", "list_type": "must be a JSON array",
         "finite_number": "must be a finite number", "float_parsing": "must be a number",
         "float_type": "must be a number", "int_parsing": "must be a whole number",
         "int_type": "must be a whole number", "int_from_float": "must be a whole number",
         "string_type": "must be text"}


def shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 3] + "..."


def problem_of(error: dict, row: dict) -> str:
    """One pydantic error of a row as words: `detail must be a JSON object, not [1, 2]`."""
    column = str(error["loc"][0]) if error["loc"] else "the row"
    value = row.get(column)
    kind = error["type"]
    if value is None or kind == "missing":
        return f"{column} is empty (null), which it never is"
    if kind in ("json_invalid", "date_type", "bool_type"):
        return f"{column} {error['msg']}: {shown(value)}"
    words = WORDS.get(kind, error["msg"].replace("Input should", "must"))
    got = _json_text_or(value)
    return f"{column} {words}, not {shown(got)}"


def _json_text_or(value: Any) -> Any:
    try:
        return _json_text(value)
    except PydanticCustomError:
        return value


def text_or_none(value: Any) -> str | None:
    """A raw value of a text column for a damaged row's listing: itself when it is text."""
    return value if isinstance(value, str) else None


# what each reading method of the Store (core.py) selects, its rows checked on the way out:
# a damaged row is one line naming the run, never a traceback
RUN, FLEET, ENVIRONMENT, TRIAL, SUPERSEDED, BOOT, PROFILE, WARNING = (
    Shape(t) for t in (runs, fleets, environments, trials, superseded_trials, boots, profiles,
                       warnings))
SAMPLE = Shape(trials.c.environment, trials.c.benchmark, trials.c.trial, trials.c.seq,
               trials.c.status, samples.c.metric, samples.c.value, samples.c.unit,
               samples.c.higher_is_better, samples.c.base_metric, samples.c.scope,
               samples.c.instance, sample_id=samples.c.id)
DETAIL = Shape(runs.c.detail)
SLOT = Shape(trials.c.id, trials.c.environment, trials.c.benchmark, trials.c.trial)
SERVED = Shape(trials.c.id, trials.c.environment, trials.c.boot, trials.c.benchmark,
               trials.c.trial)
EVIDENCE = Shape(samples.c.trial_id, samples.c.metric, samples.c.value, samples.c.unit,
                 samples.c.higher_is_better, id=samples.c.id)


def row_of(table: str, row) -> str:
    """How a damaged row is named: `its row of runs`, `its row 12 of trials`."""
    key = row._mapping.get("id") if table != "runs" else None
    return f"its row of {table}" if key is None else f"its row {key} of {table}"


def checked(shape: Shape, rows, run_id: str | None, table: str) -> list[dict]:
    """The raw `rows` of `shape`, each checked (DamagedRow at the first damaged one)."""
    return [shape.check(r, run_id, row_of(table, r)) for r in rows]


def listed_run(row) -> dict:
    """A row of runs for a listing: checked, or (damaged) its id and study name with status
    "damaged" and the one line under "damaged", so the other runs stay readable."""
    run_id = text_or_none(row._mapping.get("id"))
    try:
        return RUN.check(row, run_id, row_of("runs", row))
    except DamagedRow as exc:
        out: dict = {name: None for name, _ in RUN.pairs}
        return {**out, "id": run_id or "?", "study_name": text_or_none(row.study_name),
                "status": "damaged", "damaged": str(exc)}
