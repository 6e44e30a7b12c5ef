"""Reports of stored runs stay what they were: stores saved before issue 20's result model
(tests/fixtures/reports/*-0003.sql, store revision 0003: two real runs on native, a group
of native instances and a container; the real runner with fakes and failed trials; published
figures; exit profiles), and the reports that commit rendered from them (*.golden.*).

Opened now (the store migrates), every JSON report holds every field the golden one holds
with the same value; it may only add fields. The text formats are the same byte for byte.

The goldens were rendered again, on purpose, by issue 21 (report schema 2.0): verdicts are
the decisions of docs/decisions.md from the paired analysis of the blocks, with the published studies'
rule, raw and Holm-adjusted p and the minimal detectable change beside them. The stores are
the same ones. Issue 30 rendered the table and Markdown goldens again, on purpose: their
warnings are grouped, one line per kind (docs/warnings.md, "The grouped view"); the JSON
goldens changed only their schema version (3.1: fields added). Issue 31 rendered the real
run's table, Markdown and CSV goldens again, on purpose: what differs between each
environment and its reference (one line per pair; CSV `difference` rows); the JSON goldens
changed only their schema version (3.2: fields added). Issue 30 rendered the JSON goldens
again, on purpose: each high-CV warning's message advises only what applies on the host
(warning_groups.advice), no longer the CPU governor and --trials everywhere; with the fields
added since. Issue 38 rendered the table, wide table and Markdown goldens again, on purpose:
every format says a change by one rule (report/words/change.py: the overhead in % near 1, the
factor from 1.5× on), in the headline, the tables' overhead, interval and published columns
and the matrix's legend; the JSON goldens changed only their headline's `words` (the numbers
and every other field as they were). Issue 40 changed the JSON goldens' schema version only
(3.3: a tune run's `tune` added; null for these runs), and issue 41 (3.4: a density sweep's
`density` and a step's `run.density_sweep`, null for these runs, and `declared`, the study's
own figures and tables, empty for them)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from storekit import open_fixture

from virtbench.results.report.view import View
from virtbench.results import analysis, report

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "reports"


def added_only(golden, now, where: str = "report") -> list[str]:
    """Where `now` differs from `golden` other than by fields it adds (pure)."""
    if isinstance(golden, dict):
        if not isinstance(now, dict):
            return [f"{where}: {now!r} is not an object"]
        out = [f"{where}.{k}: gone" for k in golden if k not in now]
        for k in golden:
            if k in now:
                out += added_only(golden[k], now[k], f"{where}.{k}")
        return out
    if isinstance(golden, list):
        if not isinstance(now, list) or len(now) != len(golden):
            return [f"{where}: {len(golden)} items, now {now!r:.200}"]
        return [d for i, (g, n) in enumerate(zip(golden, now))
                for d in added_only(g, n, f"{where}[{i}]")]
    same = golden == now or (golden != golden and now != now)          # NaN then and now
    return [] if same and type(golden) is type(now) else [
        f"{where}: {golden!r} then, {now!r} now"]


def test_the_comparison_sees_a_changed_value_a_lost_field_and_allows_an_added_one():
    golden = {"run": {"id": "a", "alpha": 0.05}, "results": [{"n": 3, "vs": None}]}
    assert added_only(golden, {"run": {"id": "a", "alpha": 0.05, "schema_version": "1"},
                               "results": [{"n": 3, "vs": None, "scope": "single"}]}) == []
    assert added_only(golden, {"run": {"id": "a"}, "results": [{"n": 3, "vs": None}]}) == [
        "report.run.alpha: gone"]
    assert added_only(golden, {"run": {"id": "a", "alpha": 0.05},
                               "results": [{"n": 3.0, "vs": None}]}) == [
        "report.results[0].n: 3 then, 3.0 now"]
    assert added_only(golden, {"run": {"id": "a", "alpha": 0.05}, "results": []}) != []
    assert added_only({"ci": float("nan")}, {"ci": float("nan")}) == []
    assert added_only({"ci": float("nan")}, {"ci": None}) != []


@pytest.mark.parametrize("name, runs", [("real", 2), ("failures", 1), ("published", 1),
                                        ("profiles", 1)])
def test_json_reports_of_saved_runs_only_add_fields(tmp_path, name, runs):
    store, ids = open_fixture(name, tmp_path)
    assert len(ids) == runs
    for i, run_id in enumerate(ids):
        golden = json.loads((FIXTURES / f"{name}.{i}.golden.json").read_text())
        now = json.loads(report.render(analysis.analyze_run(store, run_id), "json"))
        assert added_only(golden, now) == []


def test_compare_and_profiles_json_only_add_fields(tmp_path):
    store, (a, b) = open_fixture("real", tmp_path)
    golden = json.loads((FIXTURES / "real.compare01.golden.json").read_text())
    now = report.render_compare(analysis.compare_runs(analysis.analyze_run(store, a),
                                                      analysis.analyze_run(store, b)), "json")
    assert added_only(golden, json.loads(now)) == []
    store, (run,) = open_fixture("profiles", tmp_path)
    golden = json.loads((FIXTURES / "profiles.0.profiles.golden.json").read_text())
    now = report.render_profiles(analysis.analyze_run(store, run), "json")
    assert added_only(golden, json.loads(now)) == []


@pytest.mark.parametrize("name", ["real", "failures"])
@pytest.mark.parametrize("fmt", ["table", "table-wide", "markdown", "csv"])
def test_text_reports_of_saved_runs_are_unchanged(tmp_path, name, fmt):
    store, ids = open_fixture(name, tmp_path)
    golden = (FIXTURES / f"{name}.0.golden.{fmt}").read_text()
    view = View(wide=True) if fmt == "table-wide" else None
    assert report.render(analysis.analyze_run(store, ids[0]), fmt.split("-")[0],
                         view) == golden


@pytest.mark.parametrize("name", ["real", "failures", "published", "profiles"])
def test_the_compact_terminal_report_of_every_saved_run_fits_100_columns_uncut(tmp_path, name):
    store, ids = open_fixture(name, tmp_path)
    for run_id in ids:
        text = report.render(analysis.analyze_run(store, run_id), "table")
        long = [line for line in text.splitlines() if len(line.rstrip()) > 100]
        assert long == [] and "…" not in text
        lines = [line.strip() for line in text.splitlines()]
        if analysis.analyze_run(store, run_id).headline:
            assert lines.index("headline") < lines.index("verdicts")
