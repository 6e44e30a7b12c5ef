"""The warnings grouped by kind, as the text formats show them: one line per kind with the
places it affects and one piece of advice that applies on this host (docs/warnings.md, "The
grouped view"). The individual warnings stay in the report for machines. Pure.

22 warnings for 12 rows (6 few_samples, 9 high_cv, ...) become one line per kind:

    high_cv on 9 rows: native · himeno · mflops, native · stream (4 metrics), and 4 more:
    CV above 5 % (11.3-22.6 %); stop other work on the host while virtbench measures
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ....core import warning_kinds
from ....core.warning_kinds import ERROR, NOTE, WARNING
from ....foundations.model import RunReport, RunWarning, WarningGroup
from ....foundations.stats.advice import PUBLISHED_TRIALS, advice_text
from ....study.flags import QUICK_TRIALS

SHOWN_PLACES = 3        # places named on the line; the rest counted ("and 4 more")
_ORDER = {ERROR: 0, WARNING: 1, NOTE: 2}
# kinds whose messages advise what may not apply on the host or in the run (the CPU
# governor, more trials under --quick): their line says the gist and advice() instead
HOST_ADVICE = frozenset({"high_cv", "few_samples"})


@dataclass(frozen=True)
class Host:
    """What the advice depends on: the fingerprint of the host that ran the baseline (its
    CPU frequency driver and governor) and the run (were its trials --quick's cap?)."""

    cpufreq: bool | None = None      # None: not known (a fingerprint before issue 30)
    governor: str | None = None
    quick: bool = False              # --quick capped the trials (QUICK_TRIALS planned)
    trials_advised: int = PUBLISHED_TRIALS   # the run's (stats/advice.py)

    @classmethod
    def of(cls, report: RunReport) -> "Host":
        """The baseline's environment when it is this host (native), else the run's first
        native one; nothing known without one."""
        return cls.of_environments(
            [(e.kind, e.label, e.metadata) for e in report.environments], report.run.baseline,
            quick=bool(report.run.quick), trials_planned=report.run.trials_planned,
            trials_advised=report.run.trials_advised)

    @classmethod
    def of_environments(cls, envs, baseline: str | None, *, quick: bool,
                        trials_planned: int | None, trials_advised: int | None) -> "Host":
        """The same from the run's environments as (kind, label, metadata) and its settings
        (the analysis, before the report exists)."""
        natives = [(label, md) for kind, label, md in envs if kind == "native"]
        chosen = next((md for label, md in natives if label == baseline),
                      natives[0][1] if natives else None)
        md = chosen or {}
        governor = md.get("governor") or None
        cpufreq = md.get("cpufreq")
        return cls(cpufreq=bool(cpufreq) if cpufreq is not None else
                   (True if governor else None), governor=governor,
                   quick=quick and trials_planned == QUICK_TRIALS,
                   trials_advised=trials_advised or PUBLISHED_TRIALS)


def advice(kind: str, host: Host) -> str | None:
    """The one piece of advice for `kind` that applies on `host`."""
    known = warning_kinds.get(kind)
    if kind == "high_cv" and host.cpufreq and host.governor and host.governor != "performance":
        return (f"set the CPU governor to performance (it is {host.governor}: "
                "cpupower frequency-set -g performance)")
    if kind == "few_samples":
        said = advice_text(host.trials_advised)
        return (f"drop --quick (it caps trials at {QUICK_TRIALS}) and {said}" if host.quick
                else said)
    return known.advice or None if known is not None else None


# the figure each gist ranges over: (pattern in the message, how to combine, its unit)
_FIGURES = {
    "few_samples": (r"only (\d+) samples", "range", " samples each"),
    "high_cv": (r"CV ([\d.]+) %", "range", " %"),
    "short_section": (r"lasted ([\d.]+) s", "range", " s"),
    "disturbed_trials": (r"^(\d+) trial", "sum", " trials"),
    "failed_trials": (r"^(?:all )?(\d+) (?:of|trial)", "sum", " trials"),
}


def _number(text: str) -> str:
    return f"{float(text):g}"


def figures(kind: str, messages: list[str]) -> str:
    """The range (or sum) of the figure `kind`'s messages give, as " (3-4 samples)"; "" when
    it has none or a message does not give it."""
    if kind not in _FIGURES:
        return ""
    pattern, how, unit = _FIGURES[kind]
    found = [re.search(pattern, m) for m in messages]
    if not found or None in found:
        return ""
    values = [float(f.group(1)) for f in found]
    if how == "sum":
        return f" ({_number(str(sum(values)))}{unit})"
    lo, hi = min(values), max(values)
    return f" ({_number(str(lo))}{unit})" if lo == hi else \
        f" ({_number(str(lo))}-{_number(str(hi))}{unit})"


def places(ws: list[RunWarning]) -> tuple[list[str], str]:
    """(the places `ws` affect in order of first appearance, the noun they are counted by):
    a row ("environment · benchmark · metric"; several metrics of one environment ·
    benchmark as "environment · benchmark (N metrics)"), a benchmark in an environment, an
    environment."""
    seen: dict[tuple, list[str]] = {}
    for w in ws:
        key = (w.environment, w.benchmark)
        metrics = seen.setdefault(key, [])
        if w.metric and w.metric not in metrics:
            metrics.append(w.metric)
    out = []
    for (env, bench), metrics in seen.items():
        head = " · ".join(x for x in (env, bench) if x)
        if len(metrics) == 1:
            head = " · ".join(x for x in (head, metrics[0]) if x)
        elif metrics:
            head += f" ({len(metrics)} metrics)"
        out.append(head)
    noun = ("row" if all(w.metric for w in ws) else "benchmark" if all(w.benchmark for w in ws)
            else "environment" if all(w.environment for w in ws) else "")
    return [p for p in out if p], noun


def count_phrase(ws: list[RunWarning], noun: str) -> str:
    """"on 9 rows", "on 6 benchmarks", "on 1 environment": what the kind affects."""
    if noun == "row":
        n = len({(w.environment, w.benchmark, w.metric) for w in ws})
    elif noun == "benchmark":
        n = len({(w.environment, w.benchmark) for w in ws})
    elif noun == "environment":
        n = len({w.environment for w in ws})
    else:
        return f"x{len(ws)}" if len(ws) > 1 else ""
    return f"on {n} {noun}{'s' if n != 1 else ''}"


def _where(ws: list[RunWarning], where: list[str], noun: str) -> str:
    """The line's places: the one place; or how many, then the first few ("on 9 rows:
    native · stream (4 metrics), ..., and 4 more")."""
    if len(where) <= 1:
        return where[0] if where else count_phrase(ws, noun)
    shown = where[:SHOWN_PLACES] if len(where) > SHOWN_PLACES + 1 else where
    named = ", ".join(shown) + (f", and {len(where) - len(shown)} more" if len(shown) <
                                len(where) else "")
    return ": ".join(x for x in (count_phrase(ws, noun), named) if x)


def group(kind: str, ws: list[RunWarning], host: Host) -> WarningGroup:
    """One kind's warnings as one group."""
    known = warning_kinds.get(kind)
    where, noun = places(ws)
    messages = [w.message for w in ws]
    distinct = list(dict.fromkeys(messages))
    tip = advice(kind, host)
    if known is not None and known.gist and (kind in HOST_ADVICE or len(distinct) > 1):
        summary = known.gist + figures(kind, messages)
    else:                                    # each message says it all, its advice with it
        summary, tip = "; ".join(distinct), None
    line = ": ".join(x for x in (_where(ws, where, noun), summary) if x) + \
        (f"; {tip}" if tip else "")
    return WarningGroup(kind=kind, severity=known.severity if known else None,
                        doc=known.anchor if known else None, count=len(ws), places=where,
                        summary=summary, advice=tip, line=line)


def groups(warnings: list[RunWarning], host: Host) -> list[WarningGroup]:
    """The warnings, one group per kind: errors, then warnings, then notes (unknown kinds
    last), each kind in the order it first appears."""
    by_kind: dict[str, list[RunWarning]] = {}
    for w in warnings:
        by_kind.setdefault(w.kind, []).append(w)
    made = [group(kind, ws, host) for kind, ws in by_kind.items()]
    return sorted(made, key=lambda g: _ORDER.get(g.severity or "", 3))


def attach(report: RunReport) -> RunReport:
    """`report` with its warnings' grouped view (again, after a warning was added)."""
    report.warning_groups = groups(report.warnings, Host.of(report))
    return report


def count_line(report: RunReport) -> str | None:
    """`--quiet`'s one line: how many warnings of which kinds; None without any."""
    if not report.warnings:
        return None
    kinds = ", ".join(f"{g.count} {g.kind}" for g in report.warning_groups) or \
        f"{len(report.warnings)}"
    n = len(report.warnings)
    return f"{n} warning{'s' if n != 1 else ''} ({kinds}): --verbose lists them"
