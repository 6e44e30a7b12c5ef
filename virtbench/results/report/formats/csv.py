"""The CSV report (`--format csv`): one row per sample, easy to load in a spreadsheet or
pandas; profiles one row per guest function; a comparison one row per metric."""
from __future__ import annotations

import csv
import io

from ....foundations.model import Comparison, RunReport
from ..fmt import tables, verdicts
from ..exporter import Exporter


def _writer(buf: io.StringIO):
    return csv.writer(buf, lineterminator="\n")


DECISION_COLUMNS = ["record", "analysis", "ratio", "ratio_ci_low", "ratio_ci_high", "p_value",
                    "p_adjusted", "correction", "mdc_pct", "blocks", "disturbed_excluded",
                    "published_ratio", "published_verdict", "claim", "holds_if",
                    "verdict_claim", "verdict_p", "verdict_p_adjusted"]
NO_VERDICT_P = [None, None, None]


def _verdict_p(vs) -> list:
    """The claim the verdict makes and its p, raw and adjusted (VsReference.verdict_p)."""
    return NO_VERDICT_P if vs is None else [vs.verdict_claim, vs.verdict_p,
                                            vs.verdict_p_adjusted]


def _decision(vs, correction) -> list:
    if vs is None:
        return [None] * 11
    rule = vs.published_rule
    return [vs.analysis, vs.ratio, vs.ratio_ci_low, vs.ratio_ci_high, vs.p_value,
            tables.difference_p_adjusted(vs, correction), correction, vs.mdc_pct, vs.blocks,
            vs.disturbed_excluded, rule.ratio if rule else None, rule.verdict if rule else None]


def to_csv(analysis: RunReport) -> str:
    """One row per sample of a successful trial (failed trials' evidence is in the JSON
    report), with its row's failed / planned trials and its verdict against its reference
    (`record` sample); then one row per further comparison of a row (`record` versus: the
    study's own reference, no sample) and per claim of the study (`record` claim: the
    claim's first two environments, its status as the verdict); then the price list of a
    primitives run: one row per primitive x environment (`record` price: trimmed_mean its
    figure, ratio its ratio to the baseline, `claim` the exits linked in its profile or why
    it has no figure, `holds_if` its family) and one per family (`record` price_family:
    `claim` the family's sentence); last, what differs between each environment and its
    reference (`record` difference: `metric` the fact's name, `claim` the fact in words,
    `reference` the reference; a pair of different kinds: `metric` kind, `claim` the kinds)."""
    buf = io.StringIO()
    w = _writer(buf)
    w.writerow(["run", "environment", "benchmark", "metric", "unit", "higher_is_better",
                "sample_index", "value", "trimmed_mean", "median", "ci_low", "ci_high",
                "overhead_pct", "verdict", "direction", "trials_needed", "reference", "method_note",
                "failed_trials", "planned_trials", "aggregate", *DECISION_COLUMNS])
    run = analysis.run.id
    correction = analysis.run.correction
    notes = {m.benchmark: m.note for m in analysis.method_notes}
    for r in analysis.results:
        vs = r.vs_baseline
        for i, v in enumerate(r.samples):
            w.writerow([run, r.environment, r.benchmark, r.metric, r.unit,
                        int(r.higher_is_better), i, repr(v), r.trimmed_mean, r.median,
                        r.ci_low, r.ci_high, vs.overhead_pct if vs else None,
                        vs.verdict if vs else verdicts.verdict_cell(r, analysis.run.baseline),
                        vs.direction if vs else None, vs.trials_needed if vs else None,
                        vs.reference if vs else None, notes.get(r.benchmark),
                        r.failed_trials, r.planned_trials, r.aggregate, "sample",
                        *_decision(vs, correction), None, None, *_verdict_p(vs)])
    for r in analysis.results:
        for vs in r.vs_others:
            w.writerow([run, r.environment, r.benchmark, r.metric, r.unit,
                        int(r.higher_is_better), None, None, r.trimmed_mean, r.median,
                        r.ci_low, r.ci_high, vs.overhead_pct, vs.verdict, vs.direction,
                        vs.trials_needed, vs.reference, notes.get(r.benchmark),
                        r.failed_trials, r.planned_trials, r.aggregate, "versus",
                        *_decision(vs, correction), None, None, *_verdict_p(vs)])
    for c in analysis.claims:
        link = c.links[0] if c.links else None
        w.writerow([run, link.left if link else None, c.benchmark, c.metric, None, None, None,
                    None, None, None, None, None, None, c.status, None,
                    link.blocks_needed if link else None, link.right if link else None,
                    notes.get(c.benchmark), None, None, None, "claim",
                    link.analysis if link else None, link.estimate if link else None,
                    link.ci_low if link else None, link.ci_high if link else None,
                    link.p_value if link else None, link.p_holm if link else None,
                    "holm" if link else None, None, link.blocks if link else None, None, None,
                    None, c.text, c.holds_if, *NO_VERDICT_P])
    for pl in analysis.price_lists:
        for row in pl.rows:
            for c in row.cells:
                exits = "; ".join(f"{e.reason} {e.count}" for e in c.exits) or (
                    f"not measured: {c.missing}" if c.missing else None)
                w.writerow([run, c.environment, pl.benchmark, row.metric, row.unit, 0, None,
                            None, c.value, None, None, None, None, c.verdict, None, None,
                            None if c.environment == pl.baseline else pl.baseline,
                            notes.get(pl.benchmark), None, None, None, "price", None, c.ratio,
                            *([None] * 10), exits, row.family, *NO_VERDICT_P])
        for sentence in pl.sentences:
            w.writerow([run, None, pl.benchmark, sentence.family] + [None] * 17
                       + ["price_family"] + [None] * 12 + [sentence.sentence, sentence.family]
                       + NO_VERDICT_P)
    for p in analysis.differences:
        said = ([("kind", p.kinds)] if p.kinds else []) + [(f.name, f.words) for f in p.facts]
        for name, words in said:
            w.writerow([run, p.environment, None, name] + [None] * 12 + [p.reference]
                       + [None] * 4 + ["difference"] + [None] * 12 + [words, None]
                       + NO_VERDICT_P)
    return buf.getvalue()


def profiles_to_csv(analysis: RunReport) -> str:
    """One row per profiled guest function (reasons as rows with an empty address)."""
    buf = io.StringIO()
    w = _writer(buf)
    w.writerow(["run", "environment", "benchmark", "source", "duration_s", "reason", "address",
                "function", "caller", "device", "count", "share_pct", "time_share_pct"])
    run = analysis.run.id
    for e in analysis.profiles:
        head = [run, e.environment, e.benchmark, e.source, e.duration_s]
        for r in e.by_reason:
            w.writerow(head + [r.reason, "", "", "", "", r.count, r.share_pct, r.time_share_pct])
        for f in e.by_function:
            w.writerow(head + ["", f.address, f.function, f.caller, f.device, f.count,
                               f.share_pct, ""])
    return buf.getvalue()


COMPARE_COLUMNS = ["environment", "benchmark", "metric", "unit", "a", "b", "n_a", "n_b",
                   "change_pct", "ci_low", "ci_high", "p_value", "verdict", "trials_needed",
                   "message"]


def compare_to_csv(comparison: Comparison) -> str:
    buf = io.StringIO()
    w = _writer(buf)
    w.writerow(COMPARE_COLUMNS)
    for r in comparison.rows:
        w.writerow([getattr(r, c) for c in COMPARE_COLUMNS])
    return buf.getvalue()


def density_to_csv(report) -> str:
    """A density sweep: one row per step x guest (results/report/density.py)."""
    from .. import density
    buf = io.StringIO()
    w = _writer(buf)
    w.writerow(density.CSV_HEADER)
    w.writerows(density.csv_rows(report))
    return buf.getvalue()


class CsvExporter(Exporter):
    def render(self, report: RunReport, verbosity: str = "normal") -> str:
        return to_csv(report)        # results only: no warnings to say more or less of

    def render_profiles(self, report: RunReport) -> str:
        return profiles_to_csv(report)

    def render_compare(self, comparison: Comparison) -> str:
        return compare_to_csv(comparison)

    def render_density(self, report) -> str:
        return density_to_csv(report)
