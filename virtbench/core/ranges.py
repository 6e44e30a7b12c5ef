"""Checking a user's number against its valid range (core/defaults.py holds the ranges): one
line naming the option, the value and the range, for flags and study keys alike."""
from __future__ import annotations

from .defaults import Range
from .errors import VirtbenchError


def problem(name: str, value: float, rng: Range) -> str | None:
    """Why `value` is not valid for `name` (a flag `--alpha` or a study key `alpha`), or None
    (pure)."""
    if rng.contains(value):
        return None
    sep = " " if name.startswith("-") else " = "
    return (f"{name} {value:g} is out of range: give {rng.what} {rng.phrase()}, "
            f"e.g. {name}{sep}{rng.example}")


def check(name: str, value: float, rng: Range) -> float:
    """`value` if it lies in `rng`, else VirtbenchError (exit 2) with one line."""
    why = problem(name, value, rng)
    if why:
        raise VirtbenchError(why)
    return value
