"""A paper's figures of what a run explains (virtbench/results/report/figures/breakdowns.py):
the exits breakdown (shares by reason stacked per environment, the rest as "other", the
count beside each bar) and the price list (each primitive's ratio on a log axis), from
reports built by hand and from runs saved from real stores."""
from __future__ import annotations


import pytest
from storekit import open_fixture, open_saved

from virtbench.foundations.model import EnvironmentRecord, RunInfo, RunReport
from virtbench.foundations.model.pricelist import PriceCell, PriceList, PriceRow
from virtbench.foundations.model.profile import Profile, ReasonRow
from virtbench.results import analysis
from virtbench.results.report.figures import breakdowns, paper, save
REASONS = [f"R{i}" for i in range(9)]         # nine reasons: two more than the colours


def _profile(env: str, counts: dict[str, int], bench: str = "pi", status: str = "ok"):
    total = sum(counts.values())
    return Profile(environment=env, benchmark=bench, status=status, source="kvm",
                   by_reason=[ReasonRow(reason=r, count=c, share_pct=100 * c / total)
                              for r, c in counts.items()])


def _report(profiles=(), prices=()) -> RunReport:
    return RunReport(run=RunInfo(id="run-7", threshold_pct=10),
                     environments=[EnvironmentRecord(label="native"),
                                   EnvironmentRecord(label="kvm"),
                                   EnvironmentRecord(label="tcg")],
                     profiles=list(profiles), price_lists=list(prices))


def test_the_top_reasons_are_the_largest_shares_summed_over_the_profiles():
    a = _profile("kvm", {"HLT": 50, "IO": 30, "MSR": 20})
    b = _profile("tcg", {"IO": 90, "EPT": 10})
    assert breakdowns.top_reasons([a, b]) == ["IO", "HLT", "MSR", "EPT"]
    assert breakdowns.top_reasons([a, b], shown=2) == ["IO", "HLT"]
    assert breakdowns.shares(a, ["IO", "EPT"]) == [30.0, 0.0, 70.0]


def test_each_environment_is_one_stacked_bar_of_its_shares_with_the_rest_as_other():
    counts = {r: 10 * (i + 1) for i, r in enumerate(REASONS)}      # R8 the most
    figs = breakdowns.exits_figures(_report([
        _profile("kvm", counts), _profile("tcg", {"R8": 3, "R7": 1}),
        _profile("native", {}, status="failed")]), "single")
    (fig,) = [f for f in figs if f.name == "exits-pi"]
    ax = fig.figure.axes[0]
    labels = [c.get_label() for c in ax.containers]
    assert labels == ["R8", "R7", "R6", "R5", "R4", "R3", "R2", "other"]
    kvm = [c.patches[0].get_width() for c in ax.containers]
    assert sum(kvm) == pytest.approx(100.0)
    assert kvm[-1] == pytest.approx(100 * (10 + 20) / sum(counts.values()))   # R0 and R1
    assert [c.patches[1].get_width() for c in ax.containers][:1] == [75.0]
    assert [t.get_text() for t in ax.texts] == [f"{sum(counts.values()):,}", "4"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["kvm (kvm)", "tcg (kvm)"]


def test_no_figure_for_a_benchmark_without_a_counted_profile():
    assert breakdowns.exits_figures(_report([_profile("kvm", {}, status="failed")]),
                                    "single") == []


def test_the_price_list_draws_each_primitives_ratio_per_guest_on_a_log_axis():
    rows = [PriceRow(metric="syscall_ns", cells=[PriceCell(environment="native", value=50),
                                                 PriceCell(environment="kvm", ratio=1.1),
                                                 PriceCell(environment="tcg", ratio=40.0)]),
            PriceRow(metric="unmeasured_ns", cells=[PriceCell(environment="kvm")])]
    (fig,) = breakdowns.price_figures(_report(prices=[PriceList(
        benchmark="primitives", baseline="native", rows=rows)]), "double")
    ax = fig.figure.axes[0]
    assert fig.name == "price-primitives" and ax.get_xscale() == "log"
    points = {line.get_label(): (line.get_xdata()[0], line.get_ydata()[0])
              for line in ax.lines if line.get_marker() == "o"}
    assert points == {"kvm": (1.1, 0), "tcg": (40.0, 0)}
    assert [t.get_text() for t in ax.get_yticklabels()] == ["syscall_ns"]
    assert ax.get_xlim()[0] < 1.0 < 40.0 < ax.get_xlim()[1]
    colours = paper.colours(_report())
    assert {line.get_label(): line.get_color() for line in ax.lines if line.get_label()
            in points} == {"kvm": colours["kvm"], "tcg": colours["tcg"]}


def test_a_saved_price_list_run_and_a_saved_profile_run_give_their_figures(tmp_path):
    store = open_saved("primitives-0004.sql", tmp_path)
    rep = analysis.analyze_run(store, store.list_runs()[-1]["id"])
    names = [f.name for f in paper.paper_figures(rep)]
    assert "price-primitives" in names
    (price,) = [f for f in paper.paper_figures(rep) if f.name == "price-primitives"]
    drawn = {t.get_text() for t in price.figure.axes[0].get_yticklabels()}
    assert drawn == {r.metric for r in rep.price_lists[0].rows if any(c.ratio for c in r.cells)}
    store, ids = open_fixture("profiles", tmp_path)
    rep = analysis.analyze_run(store, ids[-1])
    figs = {f.name: f for f in paper.paper_figures(rep)}
    assert "exits-pi" in figs
    ((name, data),) = save.rendered([figs["exits-pi"]], ["svg"], rep)
    assert name == "exits-pi.svg" and b"<svg" in data and rep.run.id.encode() in data
