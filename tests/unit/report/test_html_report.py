"""The HTML report: one self-contained file whose every chart draws in a real browser."""
from __future__ import annotations
import re
from reportkit import BATTERY, ENVIRONMENTS
from virtbench.results import analysis
from virtbench.results.report import FORMATS, render


def _n_metrics():
    return len({(b[0], b[2]) for b in BATTERY})


def _n_charts():
    """One ratio chart per benchmark: every metric here has a comparison."""
    return len({b[0] for b in BATTERY})


def test_html_is_a_format():
    assert "html" in FORMATS


def test_html_is_self_contained(filled):
    store, run_id = filled
    page = render(analysis.analyze_run(store, run_id), "html")
    assert page.startswith("<!DOCTYPE html>")
    # nothing loaded from elsewhere: no external script, stylesheet, image or font
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)\s*=", page, re.I)
    assert "@import" not in page
    assert page.count("<script") == 2          # plotly.js once, then the charts
    for label, *_ in ENVIRONMENTS:
        assert label in page
    assert "Intel(R) Xeon(R) CPU E5506" in page          # fingerprints side by side
    assert "12.5 s" in page                              # boot time
    assert page.count('class="chart"') == _n_charts()
    assert "✓ pass" in page and "✗ fail" in page         # the 0.6x guest fails at 10 %


def test_cli_writes_html(filled, tmp_path):
    from virtbench.interface.cli.commands import main
    store, run_id = filled
    out = tmp_path / "cli.html"
    assert main(["report", run_id, "--format", "html", "-o", str(out), "--store", store.url]) == 0
    assert out.read_text().count('class="chart"') == _n_charts()
    out2 = tmp_path / "cmp.html"
    assert main(["compare", run_id, run_id, "--format", "html", "-o", str(out2),
                 "--store", store.url]) == 0
    assert "virtbench compare" in out2.read_text()
