"""A run's history as a paper's figures (virtbench/results/report/figures/historyfig.py and
`virtbench figures RUN --history`): each series the run is a point of, cut at the run, the
run ringed, the changes found before it drawn between the runs they separate; a run with no
earlier run to line up with is one line, exit 2, nothing written."""
from __future__ import annotations

import os
import time

import pytest
from storekit import filled_run

from virtbench.foundations.model.history import (HistoryChange, HistoryFact, HistoryPoint,
                                                 HistoryReport, HistorySeries)
from virtbench.foundations.store import Store
from virtbench.interface.cli import commands as cli
from virtbench.results.report.figures import historyfig


def _series(kind="value", runs=("r1", "r2", "r3", "r4"), changes=()) -> HistorySeries:
    return HistorySeries(kind=kind, environment="kvm", reference="native" if kind == "ratio"
                         else None, benchmark="pi", metric="seconds", unit="s",
                         points=[HistoryPoint(run=r, started=f"2026-11-0{i + 1}T10:00:00",
                                              value=1.0 + i, ci_low=0.5 + i, ci_high=1.2 + i)
                                 for i, r in enumerate(runs)],
                         changes=list(changes))


def test_a_series_is_cut_at_the_run_with_the_changes_before_it():
    before = HistoryChange(run="r2", index=1, status="confirmed", facts=[HistoryFact(
        words="QEMU 7.2 → 8.0")])
    after = HistoryChange(run="r4", index=3, status="suspected")
    cut = historyfig.up_to(_series(changes=[before, after]), "r3")
    assert [p.run for p in cut.points] == ["r1", "r2", "r3"]
    assert cut.changes == [before]
    assert historyfig.up_to(_series(), "r1") is None          # nothing before it
    assert historyfig.up_to(_series(), "other") is None


def test_the_figure_draws_each_run_with_its_interval_the_run_ringed_and_its_changes():
    change = HistoryChange(run="r2", index=1, status="confirmed", facts=[HistoryFact(
        words="QEMU 7.2 → 8.0")])
    undecided = HistoryChange(run="r3", index=2, status="undecided")
    (fig,) = historyfig.history_figures(HistoryReport(series=[
        _series(changes=[change, undecided])]), "r3", "single")
    assert fig.name == "history-kvm-pi-seconds"
    ax = fig.figure.axes[0]
    points = [c.lines[0].get_ydata()[0] for c in ax.containers]
    assert points == [1.0, 2.0, 3.0]                              # cut at r3
    ring = [line for line in ax.lines if line.get_markersize() == 9]
    assert len(ring) == 1 and ring[0].get_xdata()[0] == 2 and ring[0].get_label() == "run r3"
    dashed = [line for line in ax.lines if line.get_linestyle() == "--"]
    assert [line.get_xdata()[0] for line in dashed] == [0.5]      # undecided: not a change
    assert [t.get_text() for t in ax.texts] == ["confirmed: QEMU 7.2 → 8.0"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2026-11-01", "2026-11-02",
                                                             "2026-11-03"]
    assert ax.get_ylabel() == "s"


def test_a_ratio_series_is_named_by_its_reference_with_a_line_at_one():
    (fig,) = historyfig.history_figures(HistoryReport(series=[_series("ratio")]), "r2",
                                        "double")
    ax = fig.figure.axes[0]
    assert fig.name == "history-kvm-native-pi-seconds"
    assert ax.get_ylabel() == "ratio to native" and ax.get_title().startswith("kvm / native")
    assert any(line.get_ydata()[0] == 1.0 and line.get_linestyle() == "-"
               for line in ax.lines if len(line.get_ydata()) == 2)


def _runs(tmp_path, count: int) -> tuple[str, list[str]]:
    url = f"sqlite:///{tmp_path / 'S.db'}"
    store = Store(url)
    ids = []
    for i in range(count):
        ids.append(filled_run(store, {"native": {"cpu": "x86"}, "kvm": {}},
                              {"native": {"triad": [100, 101, 99, 100]},
                               "kvm": {"triad": [80 + i, 82 + i, 79 + i, 81 + i]}}))
        time.sleep(1.05)                  # runs are ordered by their start (seconds)
    store.engine.dispose()
    return url, ids


def test_figures_history_writes_the_runs_series_beside_its_figures(tmp_path, capsys):
    url, ids = _runs(tmp_path, 3)
    out_dir = tmp_path / "figs"
    code = cli.main(["figures", ids[1], "-o", str(out_dir), "--format", "svg", "--history",
                     "--store", url])
    out, err = capsys.readouterr()
    assert code == 0, err
    history = sorted(f for f in os.listdir(out_dir) if f.startswith("history-"))
    assert history == ["history-kvm-native-stream-triad.svg", "history-kvm-stream-triad.svg",
                       "history-native-stream-triad.svg"]
    svg = (out_dir / "history-kvm-stream-triad.svg").read_text()
    assert f"<dc:identifier>{ids[1]}</dc:identifier>" in svg


def test_history_of_a_first_run_is_one_line_and_nothing_is_written(tmp_path, capsys):
    url, ids = _runs(tmp_path, 2)
    out_dir = tmp_path / "figs"
    code = cli.main(["figures", ids[0], "-o", str(out_dir), "--history", "--store", url])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "--history: no complete run of host testhost before it" in err
    assert not out_dir.exists()
