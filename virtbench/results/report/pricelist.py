"""The price list as report sections (pure): a table of primitive x environment (the trimmed
mean and its ratio to the baseline), one sentence per family, the exits each primitive is
linked to where a profile exists, and how to read it. Every format renders these same rows."""
from __future__ import annotations

from dataclasses import dataclass

from ...foundations.model import PriceCell, PriceList, PriceRow, RunReport
from .fmt import numbers


def ratio(x: float | None) -> str:
    """A ratio to the baseline: three significant digits, x after it."""
    if x is None:
        return ""
    return f"{x:.3g}x" if x < 1000 else f"{x:,.0f}x"


def cell(c: PriceCell, baseline: str | None) -> str:
    """"954.6" for the baseline, "11 (0.0115x)" for another, "—" where not measured."""
    if c.value is None:
        return "—"
    if c.environment == baseline or c.ratio is None:
        return numbers.value(c.value)
    return f"{numbers.value(c.value)} ({ratio(c.ratio)})"


def exit_line(row: PriceRow, c: PriceCell) -> str | None:
    """The exits `row`'s primitive is linked to in `c`'s profile, or None when the
    environment has no profile, did not measure the primitive, or the primitive causes no
    exit."""
    if not c.profiled or not row.exit_reasons or c.value is None:
        return None
    if not c.exits:
        return (f"{row.metric} · {c.environment}: none of its reasons in the profile "
                f"({', '.join(row.exit_reasons)})")
    return f"{row.metric} · {c.environment}: " + ", ".join(
        f"{e.reason} {e.count} ({e.share_pct:.1f} %)" for e in c.exits)


@dataclass(frozen=True)
class PriceListLayout:
    """A price list as every format lays it out."""

    title: str
    header: list[str]
    rows: list[list[str]]
    sentences: list[str]
    exits: list[str]
    missing: list[str]
    notes: list[str]
    price_list: PriceList


def section(pl: PriceList) -> PriceListLayout:
    header = ["primitive", *(f"{e} (baseline)" if e == pl.baseline else e
                             for e in pl.environments)]
    rows = [[r.metric, *(cell(c, pl.baseline) for c in r.cells)] for r in pl.rows]
    exits = [line for r in pl.rows for c in r.cells if (line := exit_line(r, c))]
    return PriceListLayout(f"price list · {pl.benchmark}", header, rows,
                           [s.sentence for s in pl.sentences], exits, missing_lines(pl),
                           list(pl.notes), pl)


def missing_lines(pl: PriceList) -> list[str]:
    """Why cells have no figure: one line per environment and reason, its primitives named."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for r in pl.rows:
        for c in r.cells:
            if c.value is None and c.missing:
                grouped.setdefault((c.environment, c.missing), []).append(r.metric)
    return [f"{env}: {', '.join(metrics)}: {why}" for (env, why), metrics in grouped.items()]


def sections(report: RunReport) -> list[PriceListLayout]:
    return [section(pl) for pl in report.price_lists]
