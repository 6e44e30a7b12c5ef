""""Did you mean": the nearest valid name to a mistyped one (difflib), for the one-line
messages about unknown benchmarks, environment kinds, options and flags."""
from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.6     # difflib's ratio below which a name is no near miss


def nearest(word: str, choices: Iterable[str]) -> str | None:
    """The valid name closest to `word`, or None when none is near (pure)."""
    found = difflib.get_close_matches(word, sorted(set(choices)), n=1, cutoff=CUTOFF)
    return found[0] if found and found[0] != word else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """` (did you mean 'stream'?)` for a near miss, else ``."""
    near = nearest(word, choices)
    return f" (did you mean {near!r}?)" if near else ""
