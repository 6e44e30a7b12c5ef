"""The checks every workload's parameters get before anything runs (pure): a word from its
list, a number in its range. Each refusal is one line naming the benchmark, the parameter and
what to give (VirtbenchError: exit 2, nothing run)."""
from __future__ import annotations

from typing import Any, Mapping

from ....core.errors import VirtbenchError


def one_of(bench: str, params: Mapping[str, Any], key: str, words, unbuilt=()) -> None:
    """params[key] must be one of `words`; one in `unbuilt` is a placement or mode the
    benchmark names but has not built yet, said so."""
    value = params[key]
    if value in unbuilt:
        raise VirtbenchError(f"{key}={value} is not built yet for {bench}; use "
                             f"{key}={words[0]}")
    if value not in words:
        raise VirtbenchError(f"benchmark {bench}: {key}={value!r} is not one of "
                             f"{', '.join((*words, *unbuilt))}; use {key}={words[0]}")


def in_ranges(bench: str, params: Mapping[str, Any], ranges: Mapping[str, tuple],
              why: Mapping[str, str] | None = None) -> None:
    """Each params[key] within its (low, high) of `ranges`, both included; `why` adds a
    reason to a key's refusal."""
    for key, (low, high) in ranges.items():
        if not low <= params[key] <= high:
            reason = f" ({why[key]})" if why and key in why else ""
            raise VirtbenchError(f"benchmark {bench}: {key}={params[key]} is outside "
                                 f"{low:,}..{high:,}{reason}; give one in that range")
