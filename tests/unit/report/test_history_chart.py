"""A series' chart and pages (report/historychart.py, report/formats/history_html.py), read
from the figure spec and the HTML: points with their intervals, each change point between
its runs labelled with the facts, the noise floor band per stretch, the ratio series on a
log axis centred on 1 and worse drawn up."""
from __future__ import annotations

import math

from virtbench.foundations.model.history import (HistoryChange, HistoryFact, HistoryPoint,
                                     HistoryReport, HistorySeries)
from virtbench.results.report import historychart
from virtbench.results.report.formats import history_html


def series(kind="ratio", hib=True, values=(0.9, 0.91, 0.89, 0.9, 0.72, 0.71, 0.73)):
    points = [HistoryPoint(run=f"20261128-1200{i:02d}-ab{i:02d}", started=f"2026-11-28T12:00:{i:02d}",
                           value=v, ci_low=v * 0.98, ci_high=v * 1.02, n=5)
              for i, v in enumerate(values)]
    change = HistoryChange(run=points[4].run, index=4, kind="fact", status="confirmed",
                           runs_before=4, runs_after=3, ratio=0.8, change_pct=20.0,
                           direction="worse", regression=True,
                           facts=[HistoryFact(key="qemu_version", before="7.2.22",
                                              after="10.0.2")])
    return HistorySeries(kind=kind, host="h", environment="box", reference="native",
                         benchmark="stream", metric="triad", unit="MB/s" if kind == "value"
                         else "", higher_is_better=hib, runs=len(points), noise_floor_pct=1.5,
                         mde_pct=4.0, drift_mde_pct=5.0, points=points, changes=[change])


def test_a_ratio_series_is_worse_up_on_a_log_axis_centred_on_1():
    fig = historychart.series_figure(series(), 10.0, "t")
    y = fig["layout"]["yaxis"]
    assert y["type"] == "log" and math.isclose(y["range"][0], -y["range"][1])
    ys = fig["data"][0]["y"]
    # higher is better: a ratio of 0.9 is 1/0.9 times worse, drawn above 1
    assert math.isclose(ys[0], 1 / 0.9) and ys[4] > ys[3] > 1
    assert "1" in y["ticktext"]
    band = fig["layout"]["shapes"][0]
    assert (band["y0"], band["y1"]) == (0.9, 1.1)


def test_the_change_sits_between_its_runs_labelled_with_its_facts():
    fig = historychart.series_figure(series(), 10.0, "t")
    lines = [s for s in fig["layout"]["shapes"] if s.get("yref") == "paper" and
             s["type"] == "line"]
    assert [s["x0"] for s in lines] == [3.5]
    assert lines[0]["line"]["color"] == historychart.FAIL_COLOR
    note = fig["layout"]["annotations"][0]
    assert note["text"] == "confirmed 20.0 % worse: qemu_version 7.2.22 → 10.0.2"
    assert "after / before 0.8" in note["hovertext"]


def test_the_noise_floor_is_a_band_around_each_stretch():
    s = series(kind="value", values=(100, 101, 99, 100, 80, 81, 79))
    fig = historychart.series_figure(s, 10.0, "t")
    rects = [x for x in fig["layout"]["shapes"] if x["type"] == "rect"]
    assert [(r["x0"], r["x1"]) for r in rects] == [(-0.4, 3.4), (3.6, 6.4)]
    before = historychart.level([100, 101, 99, 100])
    assert math.isclose(rects[0]["y1"], before * 1.015)
    assert math.isclose(rects[0]["y0"], before / 1.015)
    assert fig["layout"]["yaxis"].get("type") is None        # a value series: linear
    err = fig["data"][0]["error_y"]
    assert math.isclose(err["array"][0], 2.0) and math.isclose(err["arrayminus"][0], 2.0)


def test_the_pages_link_by_the_callers_links_and_escape_values():
    s = series()
    s.environment = "<b>box</b>"
    report = HistoryReport(store="sqlite:///x.db", runs=7, series=[s])
    links = history_html.Links(index="IDX", series=lambda sid: f"S/{sid}",
                               run=lambda r: f"R/{r}", plotly_src="P.js")
    index = history_html.index_page(report, links)
    sid = history_html.series_id(s)
    assert f'href="S/{sid}"' in index and "confirmed 20.0 % worse at" in index
    assert "<b>box</b>" not in index and "&lt;b&gt;box&lt;/b&gt;" in index
    assert "<script type" not in index.split("<body>")[0]       # no chart: no plotly
    page = history_html.series_page(report, s, links)
    assert 'src="P.js"' in page and f'href="R/{s.points[0].run}"' in page
    assert 'href="IDX"' in page and "<b>box</b>" not in page
    assert history_html.find(report, sid) is s and history_html.find(report, "x") is None
