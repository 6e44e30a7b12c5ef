"""Failures are visible: every format shows failed / planned trials per environment x benchmark
and warns "n of m trials failed; the figures are from the survivors"; the failed trials'
evidence is listed apart, never in the figures. Runs made by the real runner with fakes."""
import csv
import io
import json
import re

import pytest
from runkit import Flaky, Quiet, run_study

from virtbench.results.analysis import analyze_run
from virtbench.results.report import render
from virtbench.results.report.view import View
from virtbench.foundations.store import Store

WARNING = "2 of 6 trials failed; the figures are from the survivors"


@pytest.fixture
def flaky_run(store_url):
    """`good` never fails; `bad` fails its 2nd and 5th trials (the slow ones, say), after
    measuring a rate of 0.5; `dead` fails every trial."""
    store = Store(store_url)
    bench = Flaky(fail_on={2, 5}, partial={"rate": 0.5}, fail_on_env="bad")
    out = run_study(store, [Quiet("good"), Quiet("bad")], {"flaky": bench}, trials=6)
    assert out.failed == 2
    return store, out.run_id


def test_analysis_counts_failed_and_planned_and_warns(flaky_run):
    store, run_id = flaky_run
    a = analyze_run(store, run_id)
    bad = [r for r in a["results"] if r["environment"] == "bad"]
    assert {(r["failed_trials"], r["planned_trials"], r["n"]) for r in bad} == {(2, 6, 4)}
    good = [r for r in a["results"] if r["environment"] == "good"]
    assert {(r["failed_trials"], r["planned_trials"]) for r in good} == {(0, 6)}
    warned = [w for w in a["warnings"] if w["kind"] == "failed_trials"]
    assert [(w["environment"], w["benchmark"], w["message"]) for w in warned] == [
        ("bad", "flaky", WARNING)]
    assert {(c["environment"], c["planned"], c["ok"], c["failed"]) for c in a["trial_counts"]} \
        == {("good", 6, 6, 0), ("bad", 6, 4, 2)}
    evidence = a["failed_trial_evidence"]
    assert [(e["environment"], e["trial"], e["exit"]) for e in evidence] == [("bad", 2, 3),
                                                                          ("bad", 5, 3)]
    assert all(e["samples"] == {"rate": {"value": 0.5, "unit": "MB/s", "higher_is_better": True}}
               for e in evidence)
    assert all(e["stdout_tail"].endswith("measured before the failure\n") for e in evidence)
    # the evidence is not in the figures: the survivors' rates are the calls 1, 3, 4, 6
    rate = next(r for r in bad if r["metric"] == "rate")
    assert rate["samples"] == [1.0, 3.0, 4.0, 6.0]


def test_json_report_has_the_counts_the_warning_and_the_evidence(flaky_run):
    store, run_id = flaky_run
    data = json.loads(render(analyze_run(store, run_id), "json"))
    row = next(r for r in data["results"] if r["environment"] == "bad" and r["metric"] == "rate")
    assert (row["failed_trials"], row["planned_trials"]) == (2, 6)
    assert any(w["kind"] == "failed_trials" and w["message"] == WARNING for w in data["warnings"])
    assert len(data["failed_trial_evidence"]) == 2
    assert data["failed_trial_evidence"][0]["samples"]["rate"]["value"] == 0.5


def test_table_markdown_and_html_show_failed_over_planned_and_warn(flaky_run):
    store, run_id = flaky_run
    analysis = analyze_run(store, run_id)
    for fmt in ("table", "markdown", "html"):
        text = render(analysis, fmt, View(wide=True))
        assert "2/6" in text and "0/6" in text, fmt
        assert WARNING in text, fmt
        assert "bad · flaky · trial #2" in text and "rate = 0.5 MB/s" in text, fmt
    compact = render(analysis, "table")         # no detail columns; the counts are said
    assert "bad · flaky: 2 of 6 failed" in compact and "good · flaky: 0 of 6 failed" in compact


def test_csv_rows_carry_failed_and_planned(flaky_run):
    store, run_id = flaky_run
    rows = list(csv.DictReader(io.StringIO(render(analyze_run(store, run_id), "csv"))))
    bad = [r for r in rows if r["environment"] == "bad"]
    assert bad and {(r["failed_trials"], r["planned_trials"]) for r in bad} == {("2", "6")}
    assert {(r["failed_trials"], r["planned_trials"]) for r in rows
            if r["environment"] == "good"} == {("0", "6")}
    assert "0.5" not in {r["value"] for r in bad}            # evidence is no sample row


def test_a_case_whose_every_trial_failed_is_said_with_its_planned_count(store_url):
    store = Store(store_url)
    out = run_study(store, [Quiet("dead")], {"flaky": Flaky(fail_on={1, 2, 3})}, trials=3)
    a = analyze_run(store, out.run_id)
    assert a["results"] == []
    [w] = [w for w in a["warnings"] if w["kind"] == "all_trials_failed"]
    assert w["message"].startswith("all 3 of 3 trial(s) failed; last error: exit status 3")
    assert not any(w["kind"] == "failed_trials" for w in a["warnings"])
    for fmt in ("table", "markdown"):
        text = render(a, fmt)
        assert "dead · flaky: 3 of 3 failed" in text and "all 3 of 3 trial(s) failed" in text
    html = render(a, "html")
    assert "all 3 of 3 trial(s) failed" in html
    # the counts table: environment, benchmark, failed, planned, measured
    assert re.search(r"<td>dead</td><td>flaky</td><td[^>]*><span class='fail'>3</span></td>"
                     r"<td[^>]*>3</td><td[^>]*>0</td>", html)
