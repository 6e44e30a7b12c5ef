"""A study's own figures and tables ([[figure]], [[table]]; docs/studies.md): checked against
the study's benchmark labels and kept in the stored study, so that `virtbench figures` and
`virtbench report` of a run draw the paper's own figures and tables beside the default ones.

Types and kinds are schema.py's (FigureTable, TableTable); here: every benchmark named is a
[[benchmark]] label of the study ("did you mean" for a near miss), no name twice. Used by
design.load."""
from __future__ import annotations

from typing_extensions import NotRequired, TypedDict

from ..core.errors import VirtbenchError
from ..core.suggest import did_you_mean
from .schema import FigureTable, TableTable


class FigureEntry(TypedDict):
    """A [[figure]] as the study stores it."""
    name: str
    kind: str
    benchmarks: list[str]
    metrics: list[str]
    title: NotRequired[str | None]
    published: bool


class TableEntry(TypedDict):
    """A [[table]] as the study stores it."""
    name: str
    kind: str
    benchmarks: list[str]
    metrics: list[str]
    title: NotRequired[str | None]
    source: NotRequired[str | None]
    hot: dict[str, int]


def _check(where: str, names: list[str], labels: list[str]) -> None:
    for name in names:
        if name not in labels:
            raise VirtbenchError(f"{where}: benchmark {name!r} is not the label of any "
                                 f"[[benchmark]] of this study{did_you_mean(name, labels)}; "
                                 f"labels: {', '.join(labels)}")


def declared(figures: list[FigureTable], tables: list[TableTable],
             labels: list[str]) -> tuple[list[FigureEntry], list[TableEntry]]:
    """The study's [[figure]] and [[table]] tables as stored entries; VirtbenchError (one
    line naming the table) for a benchmark that is not a label or a name given twice."""
    seen: set[tuple[str, str]] = set()
    out_f: list[FigureEntry] = []
    out_t: list[TableEntry] = []
    for what, items in (("figure", figures), ("table", tables)):
        for i, item in enumerate(items, 1):
            where = f"{what}[{i}] ({item.name})"
            if (what, item.name) in seen:
                raise VirtbenchError(f"{where}: another [[{what}]] has this name; give each "
                                     "its own name")
            seen.add((what, item.name))
            _check(where, item.benchmarks, labels)
            entry = item.model_dump()
            (out_f if what == "figure" else out_t).append(entry)
    return out_f, out_t
