"""A study file's `[density]` table (docs/studies.md): what `virtbench density STUDY.toml`
sweeps, its keys the flags' names (a flag given overrides its key). Read and checked like
any study file (study/schema.py): a problem is one line naming the file, the key and the
fix."""
from __future__ import annotations

from pathlib import Path

from ..core.errors import VirtbenchError
from . import schema as study_schema
from .entries import fail, read_toml

ADD = 'add [density] with env = "qemu:mem=512M" and bench = ["stream"] (docs/studies.md)'


def load_density(path: str | Path) -> study_schema.DensityTable:
    """The [density] table of the study file at `path`, its `bench` a list."""
    path = Path(path)
    data = read_toml(path, "give the path of a .toml study with a [density] table")
    try:
        doc = study_schema.parse(data)
    except VirtbenchError as exc:
        raise fail(path, str(exc)) from None
    if doc.density is None:
        raise fail(path, f"has no [density] table; {ADD}")
    table = doc.density
    if isinstance(table.bench, str):
        table = table.model_copy(update={"bench": [table.bench]})
    return table
