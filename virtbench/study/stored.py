"""A stored run's study read back: what it holds, what a key an older run lacks falls back to,
and what is wrong with one that was edited, in one line.

The runner stores the whole resolved study with the run (design.Study.to_dict(): every
setting the analysis reads, the baseline resolved and the seed chosen), so a stored run
never depends on today's defaults. A run stored before a setting was stored with it lacks
that key: it falls back to core/defaults.py (fallbacks()). design.Study.from_dict checks the
rest with the same types and ranges as a study file (schema.py; core/defaults.py's ranges),
for every reader (report, history, the web view) and again for `run --resume`."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError
from typing_extensions import NotRequired, TypedDict

from ..core import defaults, ranges
from ..foundations.store.rows import DamagedRow

# the range of a stored key that is one of core/defaults.py's: said as a study file's is
RANGES = {"alpha": defaults.ALPHA_RANGE, "threshold_pct": defaults.THRESHOLD_RANGE}
TYPE_WORDS = {"int_type": "an integer", "float_type": "a number", "string_type": "a string",
              "bool_type": "true or false", "list_type": "a list", "dict_type": "a table",
              "dataclass_type": "a table", "typed_dict_type": "a table"}


def fallbacks() -> dict[str, Any]:
    """What a stored study that lacks a setting (a run stored before it was stored) reads
    it as: core/defaults.py's, read now."""
    return {"threshold_pct": defaults.THRESHOLD_PCT, "alpha": defaults.ALPHA,
            "analysis": defaults.ANALYSIS, "correction": defaults.CORRECTION,
            "trials": defaults.TRIALS, "warmup": defaults.WARMUP, "pin": defaults.PIN,
            "min_trials": defaults.MIN_TRIALS, "max_trials": defaults.MAX_TRIALS,
            "min_section_s": defaults.MIN_SECTION_S,
            "steal_limit_pct": defaults.STEAL_LIMIT_PCT,
            "cpu_share_limit": defaults.CPU_SHARE_LIMIT}


def method_notes(d: dict, run_id: str | None = None) -> dict[str, str] | None:
    """The {benchmark label: method note} a stored study keeps beside its benchmarks
    (to_dict()'s `method_notes`; a run's own, read as it stored them), None when it keeps
    none; DamagedRow when it is not a table of text."""
    if d.get("method_notes") is None:
        return None
    try:
        return TypeAdapter(dict[str, str]).validate_python(d["method_notes"], strict=True)
    except ValidationError as exc:
        raise DamagedRow(run_id, "its stored study",
                         problem({**exc.errors()[0],
                                  "loc": ("method_notes", *exc.errors()[0]["loc"])})) from None


class PublishedEntry(TypedDict):
    """A [[published]] figure as the study stores it (entries.published_figures)."""
    environment: str
    benchmark: str
    metric: str
    source: str
    ratio: NotRequired[int | float | None]      # as stored: an integer stays one
    ratio_derived: NotRequired[bool]
    value: NotRequired[int | float | None]
    versus: NotRequired[str | None]
    versus_value: NotRequired[int | float | None]
    verdict: NotRequired[Literal["pass", "fail"] | None]
    note: NotRequired[str | None]
    unmeasured: NotRequired[str | None]


class ClaimEntry(TypedDict):
    """A [[claim]] as the study stores it (claims.claims)."""
    text: str
    source: str
    benchmark: str
    metric: str
    environments: dict[str, str]
    holds_if: str
    relation: dict[str, Any]
    note: NotRequired[str | None]


def where(loc: tuple) -> str:
    """A pydantic error's location as the stored study's key: `alpha`, `benchmarks[2].name`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part + 1}]"
        elif not str(part)[:1].isalpha() or "[" in str(part) or "-" in str(part):
            continue                         # a union's branch, not a key
        else:
            out += f".{part}" if out else str(part)
    return out or "the study"


def problem(error: dict) -> str:
    """One pydantic error of a stored study in words: the key, what is wrong, the range."""
    key, got, kind = where(tuple(error["loc"])), error.get("input"), error["type"]
    if kind == "missing":
        return f"{key} is missing"
    if key in RANGES and isinstance(got, (int, float)) and not isinstance(got, bool):
        why = ranges.problem(key, float(got), RANGES[key])
        if why:
            return why
    if kind in TYPE_WORDS:
        return f"{key} must be {TYPE_WORDS[kind]}, not {_shown(got)}"
    rule = error["msg"].replace("Input should be", "must be")
    return f"{key} {rule}, not {_shown(got)}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
