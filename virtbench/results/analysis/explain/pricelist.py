"""The report's price lists (issue 24): for each `primitives` case of the run, the rows the
benchmark's pure builder makes from the analysed results, each cell linked to the exits its
primitive causes where an exit profile of that environment x case exists, and one sentence
per family (pure: from the results, the profiles and the cases)."""
from __future__ import annotations

from ....measure.benchmarks import pricelist
from ....foundations.model import (
    Case,
    FamilySentence,
    PriceCell,
    PriceExit,
    PriceList,
    PriceRow,
    Profile,
    Result,
    RunWarning,
)

BENCHMARK = "primitives"
SKIPPED = "primitives-skipped"
# the ioport family runs only where the environment offers guest_root_io (capabilities.py)
IOPORT_ELSEWHERE = "the ioport family runs only as root in a guest virtbench boots"
EXITS_NOTE = ("exits: from the exit profile of the environment x benchmark (--profile exits), "
              "one profiled trial of the whole benchmark, so a reason's count is shared by "
              "every primitive that causes it; TCG counts would-be exits (pio, mmio, apic): "
              "it has no cpuid, hlt or msr exit")


def price_lists(cases: list[Case], environments: list[str], baseline: str | None,
                results: list[Result], profiles: list[Profile],
                warnings: list[RunWarning] = ()) -> list[PriceList]:
    """One price list per case of the primitives benchmark that has results; columns in the
    run's environment order with the baseline first; a cell without a figure says why when
    the benchmark did (its primitives-skipped warnings)."""
    out = []
    for case in cases:
        if case.name != BENCHMARK:
            continue
        rows = pricelist.price_list(results, benchmark=case.label)
        if not rows:
            continue
        measured = {env for r in rows for env in r["cells"]}
        envs = [e for e in environments if e in measured]
        if baseline in envs:
            envs = [baseline] + [e for e in envs if e != baseline]
        profs = {p.environment: p for p in profiles
                 if p.benchmark == case.label and p.status == "ok"}
        why = {}
        for w in warnings:
            if w.kind == SKIPPED and w.benchmark == case.label and w.environment:
                metric, _, reason = w.message.partition(": ")
                why[(w.environment, metric)] = reason
        made = []
        for r in rows:
            cells = []
            for env in envs:
                c = r["cells"].get(env) or {}
                prof = profs.get(env)
                exits = [PriceExit(reason=reason, count=count, share_pct=share)
                         for reason, count, share in
                         (pricelist.exits_of(r["metric"], prof.by_reason)
                          if prof and c.get("value") is not None else [])]
                missing = None
                if c.get("value") is None:
                    missing = why.get((env, r["metric"])) or (
                        IOPORT_ELSEWHERE if r["family"] == "ioport" else None)
                cells.append(PriceCell(environment=env, value=c.get("value"),
                                       ratio=c.get("ratio"), verdict=c.get("verdict"),
                                       missing=missing,
                                       profiled=prof is not None, exits=exits))
            made.append(PriceRow(family=r["family"], metric=r["metric"], unit=r["unit"],
                                 description=r["description"],
                                 exit_reasons=list(pricelist.EXIT_REASONS.get(r["metric"], ())),
                                 cells=cells))
        said = pricelist.family_summary(rows, envs, baseline) if baseline else {}
        notes = ["cells: the trimmed mean, and in brackets its ratio to "
                 f"{baseline} (the run's verdict estimate); an order of magnitude is a ratio of "
                 f"{pricelist.ORDERS_OF_MAGNITUDE:g} or more"]
        if profs:
            notes.append(EXITS_NOTE)
        out.append(PriceList(benchmark=case.label, baseline=baseline, environments=envs,
                             rows=made, sentences=[FamilySentence(family=f, sentence=s)
                                                   for f, s in said.items()],
                             notes=notes))
    return out
