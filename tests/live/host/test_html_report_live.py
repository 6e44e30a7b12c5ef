"""The live part of tests/unit/report/test_html_report.py: its tests that need root and this host.

The HTML report: one self-contained file whose every chart draws in a real browser.
"""
from __future__ import annotations
import re
from reportkit import BATTERY, ENVIRONMENTS, open_in_chromium
from virtbench.results import analysis
from virtbench.results.report import render, render_compare


def _n_metrics():
    return len({(b[0], b[2]) for b in BATTERY})


def _n_charts():
    """One ratio chart per benchmark: every metric here has a comparison."""
    return len({b[0] for b in BATTERY})


def test_html_renders_in_chromium(filled, tmp_path, artifacts_dir):
    store, run_id = filled
    path = tmp_path / "report.html"
    path.write_text(render(analysis.analyze_run(store, run_id), "html"))
    shot = artifacts_dir / "report-test.png"
    seen = open_in_chromium(path, screenshot=shot)
    probe = seen["probe"]
    assert probe["errors"] == [], probe["errors"]
    assert seen["console_errors"] == [], seen["console_errors"]
    charts = probe["charts"]
    assert len(charts) == _n_charts()
    for c in charts:
        metrics = len({b[2] for b in BATTERY if b[0] == c["title"].split(":")[0]})
        guests = len(ENVIRONMENTS) - 1
        assert c["plotly"] and c["svg"] >= 1, c
        assert c["bars"] == metrics * guests, c            # one bar per guest and metric
        assert c["errorbars"] >= metrics * guests, c       # its interval on every bar
        assert c["title"], c
    assert shot.exists() and shot.stat().st_size > 10_000


def test_html_compare_renders_in_chromium(tmp_path, filled):
    from reportkit import fill_store, study_dict
    store, run_a = filled
    run_b = fill_store(store, study_dict(), seed=8)
    comparison = analysis.compare_runs(analysis.analyze_run(store, run_a),
                                       analysis.analyze_run(store, run_b))
    page = render_compare(comparison, "html")
    assert not re.search(r"<(script|link|img)[^>]+(src|href)\s*=", page, re.I)
    path = tmp_path / "compare.html"
    path.write_text(page)
    seen = open_in_chromium(path)
    assert seen["probe"]["errors"] == [] and seen["console_errors"] == []
    (chart,) = seen["probe"]["charts"]
    assert chart["bars"] == len(comparison["rows"]) == _n_metrics() * len(ENVIRONMENTS)
    for r in comparison["rows"]:
        assert r["verdict"] in page
