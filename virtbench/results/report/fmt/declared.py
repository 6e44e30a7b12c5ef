"""A study's own tables ([[table]]; docs/studies.md) as header and rows, the published
figures beside the measured, for the LaTeX and Markdown reports to render. Pure.

verdicts  the paper's pass/fail matrix as it drew it: a row per benchmark · metric, per
          environment the paper's mark and this run's, ○ within the threshold, × not, by the
          published studies' rule (the ratio of trimmed means, |overhead| < threshold;
          foundations/model/decision.py PublishedRule), no statistics
values    a row per benchmark · metric · environment: the paper's value and this run's
          trimmed mean, the paper's ratio and this run's (ratio of trimmed means)
exits     exits by guest function (the paper's hot functions, `hot`) and by reason, per
          profiled environment, from the run's exit profiles (`--profile exits`); a run
          without one says "not measured"

The figures (figures/declared.py) read the same selection (selected, published_only)."""
from __future__ import annotations

from dataclasses import dataclass

from ....core.decisions import Decided
from ....core.metric_id import AGGREGATE, SINGLE
from ....foundations.model import DeclaredView, Profile, PublishedFigure, Result, RunReport
from .numbers import value

MARKS = {Decided.PASS: "○", Decided.FAIL: "×"}    # the paper's marks (RIKEN's Table 15)
NO_MARK = "—"
NOT_RUN = "not run"
NO_REFERENCE = "n/a"
TOP_FUNCTIONS = 5


@dataclass(frozen=True)
class StudyTable:
    """One declared table, ready to render: caption, its key, header, rows, note."""
    name: str
    caption: str
    header: list[str]
    rows: list[list[str]]
    note: str


def _wanted(view: DeclaredView, benchmark: str, metric: str) -> bool:
    return benchmark in view.benchmarks and (not view.metrics or metric in view.metrics)


def selected(report: RunReport, view: DeclaredView) -> list[Result]:
    """The results a declared figure or table shows, in the view's benchmark order: its
    metrics, or else every metric as measured (single, a group's aggregate)."""
    rows = [r for r in report.results if _wanted(view, r.benchmark, r.metric)
            and (view.metrics or r.metric_id.scope in (SINGLE, AGGREGATE))]
    return sorted(rows, key=lambda r: view.benchmarks.index(r.benchmark))


def published_only(report: RunReport, view: DeclaredView) -> list[PublishedFigure]:
    """The study's published figures of the view no measured result matches (an
    environment virtbench cannot start here), still shown beside the measured."""
    return [p for p in report.published_only if _wanted(view, p.benchmark, p.metric)]


def env_name(report: RunReport, spec: str) -> str:
    """A published figure's environment (its spec) as the run labels it, when it ran."""
    for e in report.environments:
        if e.spec == spec:
            return e.label
    return spec


def pairs(results: list[Result], pubs: list[PublishedFigure],
          view: DeclaredView) -> list[tuple[str, str]]:
    """The (benchmark, metric) rows: those with a published figure when any has one (the
    paper's rows), else every measured one."""
    keys = [(r.benchmark, r.metric) for r in results]
    keys += [(p.benchmark, p.metric) for p in pubs]
    with_pub = {(r.benchmark, r.metric) for r in results if r.published}
    with_pub |= {(p.benchmark, p.metric) for p in pubs}
    keys = [k for k in dict.fromkeys(keys) if not with_pub or k in with_pub]
    return sorted(keys, key=lambda k: view.benchmarks.index(k[0]))


def _columns(report: RunReport, results: list[Result], pubs: list[PublishedFigure]) -> list[str]:
    """The environments compared with the reference: measured ones, then the paper's only."""
    names = [r.environment for r in results if r.vs_baseline is not None or r.published]
    names += [env_name(report, p.environment) for p in pubs]
    return [n for n in dict.fromkeys(names) if n != report.run.baseline]


def _mark(verdict) -> str:
    return MARKS.get(str(verdict), NO_MARK) if verdict is not None else NO_MARK


def _here(r: Result | None) -> str:
    """This run's mark: not run, no comparison (n/a: no reference sample), ○ or ×."""
    if r is None:
        return NOT_RUN
    if r.vs_baseline is None:
        return NO_REFERENCE
    return _mark(r.vs_baseline.published_rule.verdict if r.vs_baseline.published_rule else None)


def verdicts_table(report: RunReport, view: DeclaredView) -> StudyTable:
    results, pubs = selected(report, view), published_only(report, view)
    columns = _columns(report, results, pubs)
    by_key = {(r.benchmark, r.metric, r.environment): r for r in results}
    pub_by = {(p.benchmark, p.metric, env_name(report, p.environment)): p for p in pubs}
    rows = []
    for bench, metric in pairs(results, pubs, view):
        row = [f"{bench} · {metric}"]
        for env in columns:
            r, p = by_key.get((bench, metric, env)), pub_by.get((bench, metric, env))
            paper = (r.published if r is not None and r.published else p)
            row.append(_mark(paper.verdict) if paper else NO_MARK)
            row.append(_here(r))
        rows.append(row)
    header = ["benchmark · metric", *(f"{env} {side}" for env in columns
                                      for side in ("paper", "here"))]
    t = report.run.threshold_pct
    note = (f"○: within ±{t:g} % of {report.run.baseline or 'the reference'}, ×: {t:g} % or "
            f"more (the paper's rule: the ratio of trimmed means, the highest and the lowest "
            f"sample dropped, no statistics). paper: as published"
            f"{f' ({view.source})' if view.source else ''}; here: this run; {NO_MARK}: no "
            f"figure; {NOT_RUN}: the environment was not measured here; {NO_REFERENCE}: no "
            "comparison (the reference has no sample: see the run's failures).")
    return StudyTable(view.name, view.title or view.name, header, rows, note)


def reference_values(report: RunReport, rows: list[Result],
                     pubs: list[PublishedFigure]) -> dict[str, float]:
    """{environment: the paper's figure of it as a reference} (a published figure's
    versus_value, the reference its `versus` or the baseline), the first one given."""
    out: dict[str, float] = {}
    for r in rows:
        m = r.published
        if m is not None and m.versus_value is not None:
            out.setdefault(m.versus or report.run.baseline or "", m.versus_value)
    for p in pubs:
        if p.versus_value is not None:
            ref = env_name(report, p.versus) if p.versus else report.run.baseline or ""
            out.setdefault(ref, p.versus_value)
    return out


def _value_row(r: Result | None, env: str, paper, ref_value: float | None) -> list[str]:
    here = value(r.trimmed_mean) + (f" {r.unit}" if r.unit else "") if r else NOT_RUN
    pub = paper.value if paper is not None and paper.value is not None else ref_value
    rule = r.vs_baseline.published_rule if r is not None and r.vs_baseline else None
    return [env, value(pub) if pub is not None else NO_MARK, here,
            f"{paper.ratio:.3f}" if paper is not None and paper.ratio else NO_MARK,
            f"{rule.ratio:.3f}" if rule is not None and rule.ratio else NO_MARK]


def values_table(report: RunReport, view: DeclaredView) -> StudyTable:
    results, pubs = selected(report, view), published_only(report, view)
    rows = []
    for bench, metric in pairs(results, pubs, view):
        mine = [r for r in results if (r.benchmark, r.metric) == (bench, metric)]
        theirs = [p for p in pubs if (p.benchmark, p.metric) == (bench, metric)]
        refs = reference_values(report, mine, theirs)
        for r in mine:
            rows.append([bench, metric, *_value_row(r, r.environment, r.published,
                                                    refs.get(r.environment))])
        for p in theirs:
            env = env_name(report, p.environment)
            rows.append([bench, metric, *_value_row(None, env, p, refs.get(env))])
    note = ("paper: the published figure (a reference's: the paper's own value of it); "
            "here: this run's trimmed mean; ratios against the baseline "
            f"({report.run.baseline or 'none'}), the paper's against its own reference; this "
            "run's the ratio of trimmed means. "
            f"{NOT_RUN}: not measured here.")
    return StudyTable(view.name, view.title or view.name,
                      ["benchmark", "metric", "environment", "paper", "here", "paper ratio",
                       "here ratio"], rows, note)


def _symbol(function: str | None, address: str) -> str:
    return (function or address).split("+")[0]


def _exit_counts(p: Profile) -> tuple[dict[str, int], dict[str, int]]:
    """(count by guest function, its top few; count by reason) of one profile."""
    by_function: dict[str, int] = {}
    for f in p.by_function:
        name = _symbol(f.function, f.address)
        by_function[name] = by_function.get(name, 0) + f.count
    top = dict(sorted(by_function.items(), key=lambda kv: -kv[1])[:TOP_FUNCTIONS])
    return top, {r.reason: r.count for r in p.by_reason}


def exits_table(report: RunReport, view: DeclaredView) -> StudyTable:
    profiles = [p for p in report.profiles if p.benchmark in view.benchmarks
                and p.status == "ok"]
    caption = view.title or view.name
    header = ["exits at", "paper", *(f"{p.environment} · {p.benchmark}" for p in profiles)]
    counts = [_exit_counts(p) for p in profiles]
    functions = list(dict.fromkeys([*view.hot, *(f for top, _ in counts for f in top)]))
    rows = [[f, str(view.hot[f]) if f in view.hot else NO_MARK,
             *(str(top.get(f, 0)) if f in top else NO_MARK for top, _ in counts)]
            for f in functions]
    reasons = list(dict.fromkeys(r for _, by in counts for r in by))
    rows += [[f"reason {r}", NO_MARK, *(str(by.get(r, 0)) for _, by in counts)]
             for r in reasons]
    if not profiles:
        rows = [[f, str(view.hot[f]), "not measured"] for f in view.hot] or \
            [["not measured", NO_MARK, NO_MARK]]
        header = [*header, "here"]
    note = (f"paper: its exit counts by guest function{f' ({view.source})' if view.source else ''}; "
            f"here: the top {TOP_FUNCTIONS} guest functions and the exits by reason of each "
            "profiled trial (KVM: VM exits; TCG: would-be exits). "
            + ("" if profiles else "This run has no exit profile of "
               f"{', '.join(view.benchmarks)}: not measured; run with --profile exits."))
    return StudyTable(view.name, caption, header, rows, note)


BUILDERS = {"verdicts": verdicts_table, "values": values_table, "exits": exits_table}


def study_tables(report: RunReport) -> list[StudyTable]:
    """Every [[table]] the run's study declares, in its order."""
    return [BUILDERS[v.kind](report, v) for v in report.declared
            if v.what == "table" and v.kind in BUILDERS]
