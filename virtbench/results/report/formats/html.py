"""The HTML report (`--format html`): one self-contained file (plotly.js inline, nothing
fetched when opened), laid out by the Jinja2 templates in ../templates/.

First, for a tune run, the tune: its headline, design and an effects chart per metric
(../figures/tunechart.py). Then the headline: per environment its change against its reference in words
(words/headline.py); the study's own tables ([[table]], fmt/declared.py) before the
verdict matrix. Per benchmark, one ratio chart (../ratios.py: every environment
against its reference on a log scale centred on 1, the ±threshold band shaded, each bar
labelled with its change (words/change.py), its interval as a whisker), a bar chart of the
values for each metric with no comparison, then the overhead table with its verdicts and the exit profiles; before that the run and the
environments' fingerprints side by side; after it the warnings. This module builds what the
templates show (cells as text, or {text, cls, title} spans) and the charts (../charts.py);
the templates escape every value.
"""
from __future__ import annotations

import json
from functools import lru_cache
from html import escape
from itertools import groupby
from pathlib import Path

from ....core import defaults, warning_kinds
from ....core.decisions import ClaimStatus, Decided
from ....foundations.model import Comparison, Result, RunReport
from ....foundations.model.density import DensityReport
from ....machinery.vmlife.phases import ORDER as PHASE_ORDER
from .. import aggregates, charts, density, failures, matrix, pricelist, profiles, ratios
from ..fmt import compare, differences, header, lists, numbers, published, tables, verdicts
from ..fmt import tune as tune_text
from ..fmt.declared import study_tables
from ..exporter import Exporter
from ..figures import tunechart

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"

# The fingerprint's headline, in this order; everything else goes under "all details".
HEADLINE_KEYS = ("cpu_model", "cores", "logical_cpus", "cpus", "mem", "memory", "kernel", "os",
                 "accel", "accel_reason", "platform_description", "platform", "hypervisor",
                 "hypervisor_product", "container", "virtualization", "hypervisor_flag",
                 "qemu_version", "machine", "dmi", "disk", "disk_model", "guest_disk_drivers",
                 "nic", "nic_model", "guest_nic_drivers", "cache", "backing", "clocksource")


@lru_cache(maxsize=1)
def _environment():
    """Jinja2, escaping every value as html.escape does (None shows as nothing)."""
    from jinja2 import Environment, FileSystemLoader
    from markupsafe import Markup

    def finalize(value):
        if value is None:
            return ""
        return value if isinstance(value, Markup) else Markup(escape(str(value)))
    return Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, finalize=finalize,
                       keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)


def _page(template: str, title: str, chart_specs: list[tuple[str, dict]],
          plotly_src: str | None = None, nav: list[tuple[str, str]] | None = None,
          **view) -> str:
    """A page of `template`: plotly.js once (inline, or from `plotly_src` when a set of
    pages shares one copy; "" for a page without charts), every chart drawn from its spec; `nav`: (text, href) links
    shown at the top."""
    from markupsafe import Markup
    specs = json.dumps([{"id": cid, "fig": fig} for cid, fig in chart_specs],
                       separators=(",", ":"))
    specs = specs.replace("</", "<\\/")      # never close the script element early
    draw = ("(function(){var specs=" + specs + ";"
            "specs.forEach(function(s){var el=document.getElementById(s.id);"
            "Plotly.newPlot(el,s.fig.data,s.fig.layout,{displayModeBar:false,responsive:true});"
            "});})();")
    return _environment().get_template(template).render(
        title=title, plotly_js=None if plotly_src is not None else Markup(plotly_js()),
        plotly_src=plotly_src, nav=nav or [], draw=Markup(draw),
        reason_header=profiles.REASON_HEADER, function_header=profiles.FUNCTION_HEADER, **view)


@lru_cache(maxsize=1)
def plotly_js() -> str:
    """plotly.js itself, as the plotly package bundles it (nothing fetched)."""
    from plotly.offline import get_plotlyjs
    return get_plotlyjs()


def _span(text, cls: str | None, title: str | None = None, **more) -> dict:
    return {"text": text, "cls": cls, "title": title, **more}


def _fail(text) -> dict:
    """A failure count, in red."""
    return {"text": text, "cls": "fail", "single_quoted": True}


def _key(text: str) -> dict:
    return _span(text, "key")


# -- environments side by side ---------------------------------------------------------------
def _md_value(v):
    if v is None:
        return _span("—", "muted")
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return numbers.value(v)
    if isinstance(v, list) and all(isinstance(x, (str, int, float)) for x in v):
        text = ", ".join(str(x) for x in v)
    elif isinstance(v, (dict, list)):
        text = json.dumps(v, ensure_ascii=False, default=str)
    else:
        text = str(v)
    if len(text) > 80:
        return _span(text, "long mono", tag="div")
    return _span(text, "mono") if isinstance(v, (list, dict)) else text


def _env_rows(envs, keys, source) -> list[list]:
    return [[_key(label), *(_md_value(source(e).get(k)) for e in envs)] for k, label in keys]


def environments_view(analysis: RunReport) -> dict | None:
    envs = analysis.environments
    if not envs:
        return None
    baseline = analysis.run.baseline
    header = ["", *({"text": e.label, "note": "(baseline)" if e.label == baseline else None}
                    for e in envs)]
    top = [[_key(k), *cells] for k, cells in (
        ("kind", [e.kind for e in envs]),
        ("spec", [_span(e.spec, "mono") for e in envs]),
        ("status", [{"text": e.status, "error": e.error} for e in envs]),
        ("ready in", ["—" if e.boot_s is None else f"{e.boot_s:.1f} s" for e in envs]))]
    md = [e.metadata for e in envs]
    present = {k for m in md for k in m if m.get(k) not in (None, "", [], {})}
    head = [(k, k) for k in HEADLINE_KEYS if k in present]
    opts = sorted({k for e in envs for k in e.options})
    rest = sorted({k for m in md for k in m} - {k for k, _ in head})
    return {"header": header, "rows": top + _env_rows(envs, head, lambda e: e.metadata),
            "details": _env_rows(envs, [(k, f"option {k}") for k in opts], lambda e: e.options)
            + _env_rows(envs, [(k, k) for k in rest], lambda e: e.metadata)}


# -- the run -----------------------------------------------------------------------------------
def overhead_header(correction: str | None) -> list[str]:
    return ["environment", "metric", "n", failures.COLUMN, "trimmed mean", "95 % CI", "CV",
            "ratio", *tables.comparison_columns(correction), "verdict"]


def _verdict(r: Result, baseline: str | None, run_analysis: str | None) -> dict:
    vs = r.vs_baseline
    return _span(verdicts.verdict_cell(r, baseline, run_analysis),
                 _cls(vs.verdict) if vs else "muted", vs.message if vs and vs.message else None)


def _cls(verdict: str) -> str:
    """A verdict as a CSS class ("differs, within threshold": differs)."""
    return "differs" if verdict == Decided.DIFFERS else verdict


def overhead_rows(rows: list[Result], baseline: str | None, pub: bool,
                  correction: str | None = defaults.CORRECTION, run_analysis: str | None = None
                  ) -> list[list]:
    out = []
    for r in rows:
        vs = r.vs_baseline
        row = [r.environment, tables.metric_cell(r), r.n,
               _fail(failures.cell(r)) if r.failed_trials else failures.cell(r),
               numbers.value(r.trimmed_mean), numbers.ci(r.ci_low, r.ci_high), tables.cv_cell(r),
               numbers.ratio(vs.ratio) if vs else "—",
               *tables.comparison_cells(r, vs, correction),
               _verdict(r, baseline, run_analysis)]
        out.append(row + (published.published_cells(r, baseline) if pub else []))
        for other in r.vs_others:
            row = [tables.other_label(other), tables.metric_cell(r), "", "", "", "", "",
                   numbers.ratio(other.ratio), *tables.comparison_cells(r, other, correction),
                   _span(verdicts.vs_mark(other, baseline, run_analysis, False),
                         _cls(other.verdict), other.message or None)]
            out.append(row + (["", "", ""] if pub else []))
    return out


def profile_views(analysis: RunReport, benchmark: str | None,
                  chart_specs: list[tuple[str, dict]]) -> list[dict]:
    """The exit profiles of one benchmark (every one when None); their charts are added."""
    out = []
    for part in profiles.sections(analysis, benchmark):
        cid = None
        if part.functions:
            cid = f"chart-{len(chart_specs)}"
            chart_specs.append((cid, charts.function_figure(
                part.profile, f"top guest functions · {part.profile.environment}")))
        out.append({"section": part, "chart": cid})
    return out


def failures_view(analysis: RunReport) -> dict | None:
    if not failures.any_failed(analysis):
        return None
    return {"counts_title": failures.title(failures.COUNTS_TITLE),
            "evidence_title": failures.title(failures.EVIDENCE_TITLE),
            "counts": [[c.environment, c.benchmark,
                        _fail(c.failed) if c.failed else "0",
                        c.planned if c.planned is not None else "?", c.ok]
                       for c in analysis.trial_counts],
            "evidence": [{"line": failures.evidence_line(e), "tail": failures.output_tail(e)}
                         for e in analysis.failed_trial_evidence]}


def _about(kind: str) -> str | None:
    """What a warning's kind means (the catalogue's words), shown when hovering it."""
    known = warning_kinds.get(kind)
    return f"{known.severity}: {known.meaning} ({known.anchor})" if known else None


def warnings_view(analysis: RunReport, verbosity: str = "normal") -> list[dict]:
    """The warnings as the page lists them: one item per kind with its warnings folded
    under it (normal), or every warning with its details (verbose)."""
    if verbosity == "verbose":
        return [{"kind": w.kind, "line": f"{lists.where(w)}: {w.message}" if lists.where(w)
                 else w.message, "about": _about(w.kind), "each": [],
                 "detail": w.detail} for w in analysis.warnings]
    return [{"kind": g.kind, "line": g.line, "about": _about(g.kind), "detail": None,
             "each": [lists.warning_lines(w) for w in analysis.warnings if w.kind == g.kind]
             if g.count > 1 or any(w.detail for w in analysis.warnings if w.kind == g.kind)
             else []} for g in lists.groups(analysis)]


# a claim's status as the CSS class of a verdict
CLAIM_CLASS = {ClaimStatus.HOLDS: "pass", ClaimStatus.NOT_HOLDS: "fail"}


def headline_view(analysis: RunReport) -> list[dict]:
    """Per environment: against what, its summary words and each row's words
    (words/headline.py), first thing on the page."""
    out = []
    for h in analysis.headline:
        s = h.summary
        out.append({"environment": h.environment, "reference": h.reference,
                    "summary": s.words if s else "no row with a ratio",
                    "left_out": (f"{s.left_out} row{'s' if s.left_out != 1 else ''} without "
                                 "a ratio left out") if s and s.left_out else None,
                    "rows": [{"text": f"{i.benchmark} · {i.metric}: {i.words}",
                               "cls": _cls(i.verdict)} for i in h.items]})
    return out


def tune_view(analysis: RunReport, chart_specs: list[tuple[str, dict]]) -> dict | None:
    """A tune run's section (before the headline): its headline, its design, the trade-off
    and note, and an effects chart per metric (../figures/tunechart.py), which are added."""
    tune = analysis.tune
    if tune is None:
        return None
    ids = []
    for fig in tunechart.metric_figures(analysis):
        ids.append(f"chart-{len(chart_specs)}")
        chart_specs.append((ids[-1], fig))
    more = [line for line in tune_text.lines(analysis) if line.startswith("refine: ")]
    more += [f"trade-off: {tune.trade_off}" if tune.trade_off else None,
             f"note: {tune.note}" if tune.note else None]
    return {"headline": tune.headline, "design": tune_text.design_summary(tune.design),
            "notes": [x for x in more if x], "charts": ids}


def render(analysis: RunReport, verbosity: str = "normal") -> str:
    run = analysis.run
    baseline = run.baseline
    pub = published.has_published(analysis)
    m = matrix.build(analysis)
    chart_specs: list[tuple[str, dict]] = []
    benchmarks = []
    for bench, rows in groupby(analysis.results, key=lambda r: r.benchmark):
        rows = list(rows)
        metric_charts = []
        phase_chart = charts.phase_figure(rows, PHASE_ORDER, f"{bench}: phases, stacked")
        if phase_chart is not None:
            cid = f"chart-{len(chart_specs)}"
            chart_specs.append((cid, phase_chart))
            metric_charts.append({"id": cid, "metric": "phases"})
        seen_envs = set()
        for mig in analysis.migrations:     # one timeline per environment: its first trial
            if mig.benchmark == bench and mig.environment not in seen_envs:
                seen_envs.add(mig.environment)
                cid = f"chart-{len(chart_specs)}"
                chart_specs.append((cid, charts.migration_figure(
                    mig, f"{mig.environment} · {bench}: timeline of trial {mig.trial}")))
                metric_charts.append({"id": cid, "metric": "timeline"})
        ratio_chart = ratios.ratio_figure(
            rows, baseline, f"{bench}: each environment against its reference, log scale",
            run.threshold_pct)
        if ratio_chart is not None:
            cid = f"chart-{len(chart_specs)}"
            chart_specs.append((cid, ratio_chart))
            metric_charts.append({"id": cid, "metric": "ratios", "wide": True})
        for metric, mrows in groupby(rows, key=lambda r: r.metric):
            mrows = list(mrows)
            if ratios.comparisons(mrows, baseline):
                continue            # drawn as ratios above
            cid = f"chart-{len(chart_specs)}"
            title = (f"{metric} ({mrows[0].unit}) · "
                     f"{'higher' if mrows[0].higher_is_better else 'lower'} is better")
            chart_specs.append((cid, charts.bar_figure(mrows, baseline, title)))
            metric_charts.append({"id": cid, "metric": metric})
        benchmarks.append({"name": bench, "charts": metric_charts,
                           "rows": overhead_rows(rows, baseline, pub, run.correction,
                                                 run.analysis),
                           "profiles": profile_views(analysis, bench, chart_specs)})
    summary = [[_key(k), v] for k, v in (
        ("study", run.study), ("status", run.status), ("started", run.started),
        ("finished", run.finished), ("baseline", baseline or "(none)"),
        ("baseline chosen", f"for this report; the study's: {run.study_baseline}"
         if run.study_baseline else None),
        ("verdict threshold", f"{run.threshold_pct:g} %"), ("alpha", f"{run.alpha:g}"),
        ("analysis", header.analysis_line(analysis)),
        ("trials planned", run.trials_planned), ("adaptive trials", header.adaptive_line(run)),
        ("measured sections", header.sections_line(run)), ("seed", run.seed), ("host", run.host),
        ("virtbench", run.virtbench_version),
        ("results", f"{len(analysis.results)} (environment × benchmark × metric)"),
        ("warnings", len(analysis.warnings))) if v is not None]
    return _page(
        "run.html.j2", f"virtbench {run.id}", chart_specs if verbosity != "quiet" else [],
        run=run, tune=tune_view(analysis, chart_specs), headline=headline_view(analysis),
        differences=[{"line": p.line, "facts": differences.detail(p)
                      if len(p.facts) > 1 or p.unrecorded else []}
                     for p in analysis.differences],
        matrix={"columns": m.columns,
                "rows": [[name, *(_span(c.text, _cls(c.verdict) if c.verdict else "muted")
                                   for c in cells)] for name, cells in m.rows]},
        legend=matrix.LEGEND, study_tables=study_tables(analysis),
        price_lists=pricelist.sections(analysis),
        method_notes=lists.method_note_lines(analysis), summary=summary,
        environments=environments_view(analysis), benchmarks=benchmarks,
        overhead_header=overhead_header(run.correction)
        + (list(published.PUBLISHED_COLUMNS) if pub else []),
        inconclusive=lists.inconclusive_lines(analysis),
        claims=[{"mark": lists.CLAIM_MARKS.get(c.status, c.status),
                 "cls": CLAIM_CLASS.get(c.status, "inconclusive"),
                 "line": f"{c.text} ({c.source}; {c.benchmark} · {c.metric}: {c.holds_if})",
                 "why": c.message} for c in analysis.claims],
        footer=header.footer(analysis),
        published_only=published.published_only_lines(analysis),
        aggregates_title=failures.title(aggregates.AGGREGATES_TITLE),
        aggregates=aggregates.aggregate_lines(analysis), failures=failures_view(analysis),
        warnings=warnings_view(analysis, verbosity), quiet=verbosity == "quiet",
        warning_count=lists.warning_count_line(analysis),
        threshold=f"{run.threshold_pct:g}", alpha=f"{run.alpha:g}", published=pub)


def render_profiles(analysis: RunReport) -> str:
    chart_specs: list[tuple[str, dict]] = []
    views = profile_views(analysis, None, chart_specs)
    return _page("profiles.html.j2", f"virtbench {analysis.run.id} · exit profiles",
                 chart_specs, run=analysis.run, profiles=views)


# -- two runs ----------------------------------------------------------------------------------
def render_compare(comparison: Comparison) -> str:
    a, b = comparison.a, comparison.b
    chart_specs = []
    fig = ratios.compare_figure(comparison.rows, "B against A per metric, log scale",
                                comparison.min_change_pct)
    if fig is not None:
        chart_specs.append(("chart-0", fig))
    rows = [[r.environment, r.benchmark, tables.metric_cell(r), numbers.value(r.a),
             numbers.value(r.b), f"{r.n_a} / {r.n_b}", *compare.change_cells(r),
             numbers.p(r.p_value),
             _span(compare.compare_verdict(r), r.verdict, r.message)]
            for r in comparison.rows]
    return _page(
        "compare.html.j2", f"virtbench compare {a.id} {b.id}", chart_specs, a=a, b=b,
        runs=[[_key(k), getattr(a, k), getattr(b, k)]
              for k in ("id", "study", "started", "status", "quick", "baseline", "host")],
        alpha=comparison.alpha, min_change=f"{comparison.min_change_pct:g}",
        warnings=comparison.warnings, has_chart=bool(chart_specs), rows=rows,
        only_in=[(side, [" · ".join(k) for k in keys])
                 for side, keys in compare.only_in(comparison)],
        differences=compare.difference_lines(comparison))


# -- a density sweep ---------------------------------------------------------------------------
def render_density(report: DensityReport) -> str:
    refs = {c.benchmark: c for c in report.curves if c.reference}
    chart_specs, rows = [], []
    for c in report.curves:
        if not c.reference:
            cid = f"chart-{len(chart_specs)}"
            chart_specs.append((cid, density.curve_figure(c, refs.get(c.benchmark),
                                                          report.rule.per_guest_floor)))
        rows += [density.step_row(c, s) for s in c.steps]
    return _page("density.html.j2", f"virtbench density {report.environment}", chart_specs,
                 environment=report.environment, summary=density.summary_lines(report),
                 charts=[cid for cid, _ in chart_specs], header=density.STEP_HEADER, rows=rows)


class HtmlExporter(Exporter):
    def render(self, report: RunReport, verbosity: str = "normal") -> str:
        return render(report, verbosity)

    def render_profiles(self, report: RunReport) -> str:
        return render_profiles(report)

    def render_compare(self, comparison: Comparison) -> str:
        return render_compare(comparison)

    def render_density(self, report: DensityReport) -> str:
        return render_density(report)

    def render_history(self, report) -> str:
        """A history is a set of pages (history_html.py), not one: written by
        `virtbench history --format html -o DIR` (web/static.py) and served by `serve`."""
        from ....core.errors import VirtbenchError
        raise VirtbenchError("a history in HTML is a directory of pages: use virtbench "
                             "history --format html -o DIR, or virtbench serve")
