"""The baseline: which environment the others are compared with. One rule, wherever a
baseline is named (a study file's `baseline`, `run --baseline`, `report --baseline`) or
none is, for a new run's plan and a stored run's report alike (resolve_baseline)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..core.errors import VirtbenchError
from ..measure.environments import EnvSpec

NATIVE = "native"


@dataclass(frozen=True)
class Candidate:
    """An environment a baseline may name: its label, its spec (as the study wrote it) and
    the names it was stored with (a run stored before name=LABEL became the label)."""
    label: str
    spec: str | None = None
    names: tuple[str, ...] = ()


def stored_candidates(environments: list[dict]) -> list[Candidate]:
    """A stored run's environments (the store's rows) as candidates."""
    return [Candidate(e["label"], e.get("spec"), tuple(
        n for n in ((e.get("options") or {}).get("name"), (e.get("metadata") or {}).get("name"))
        if n)) for e in environments]


def _spec(text: str | None) -> str | None:
    """One spelling of a spec; None for text that is no spec (a label, say)."""
    if not text:
        return None
    try:
        return str(EnvSpec.parse(text))
    except VirtbenchError:
        return None


def named(text: str, candidates: list[Candidate]) -> str | None:
    """The label of the candidate `text` names: by its label, else its spec (either
    spelling), else the one candidate stored under that name; None when none (or several)."""
    if any(c.label == text for c in candidates):
        return text
    spec = _spec(text)
    for c in candidates:
        if c.spec is not None and (text == c.spec or (spec is not None and spec == _spec(c.spec))):
            return c.label
    by_name = [c.label for c in candidates if text in c.names]
    return by_name[0] if len(by_name) == 1 else None


def resolve_baseline(asked: str | None, candidates: list[Candidate], *,
                     stored: str | None = None, first_if_none: bool = False,
                     unknown: Callable[[list[str]], str] | None = None) -> str | None:
    """The baseline's label: the one `asked` names (a flag, a study file's key; VirtbenchError
    with `unknown(labels)`'s line when it names none), else the one a run `stored` (as it
    stored it), else `native` when there is one, else (a new run's plan, `first_if_none`)
    the first of two or more environments, as hyperfine compares with its first command;
    else none."""
    labels = [c.label for c in candidates]
    if asked is not None:
        found = named(asked, candidates)
        if found is None:
            raise VirtbenchError(unknown(labels) if unknown else
                                 f"baseline {asked!r} is not an environment of this study; "
                                 f"use one of its labels ({', '.join(labels)}) or specs")
        return found
    if stored is not None:
        return named(stored, candidates) or stored
    if NATIVE in labels:
        return NATIVE
    if first_if_none and len(labels) > 1:
        return labels[0]
    return None
