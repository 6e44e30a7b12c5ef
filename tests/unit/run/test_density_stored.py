"""A density sweep stored as a run of its own (execution/run/density.py SweepRecord): written as it
goes, read back by `virtbench report` in every format (results/analysis/sweep.py), listed
by `virtbench runs`, kept when interrupted; its steps the real reports of a real sweep
(tests/fixtures/density/README.md), the runner faked."""
from __future__ import annotations

import json

import pytest

from virtbench.execution.run import density as sw
from virtbench.foundations.model.density import DensityReport
from virtbench.foundations.store import Store
from virtbench.interface.cli.commands import main
from virtbench.results import analysis, report as reports
from virtbench.foundations.store import sweeps as sweep

from test_density import real


class StoredSteps:
    """Each step a run of the store (as the runner makes one), its report the real sweep's
    step of that count; `stop_at`: the step that raises instead (Ctrl-C)."""

    def __init__(self, store: Store, monkeypatch, stop_at: int | None = None):
        self.store, self.stop_at, self.ids = store, stop_at, []
        self.status = "complete"
        counts: dict[str, int] = {}
        self.counts = counts
        monkeypatch.setattr(sw, "analyze_run", self.report)

    def report(self, store, run_id: str):
        got = real(self.counts[run_id])
        got.run.id = run_id
        return got

    def __call__(self, study) -> str:
        count = len(self.ids) + 1
        if count == self.stop_at:
            raise KeyboardInterrupt
        run_id = self.store.create_run({"name": f"step {count}"}, seed=1, quick=False,
                                       version="test", host="here")
        self.store.set_run_status(run_id, self.status)
        self.ids.append(run_id)
        self.counts[run_id] = count
        return run_id


def store_of(tmp_path) -> tuple[Store, str]:
    url = f"sqlite:///{tmp_path / 's.db'}"
    return Store(url), url


def swept_by(store, steps) -> sw.Sweep:
    return sw.Sweep(sw.DensityRequest("native", ["cyclepi:steps=200000000"], 8, trials=2),
                    store=store, run_step=steps, available=lambda: 2**40)


def test_the_sweep_is_a_run_and_report_reads_it_back(tmp_path, monkeypatch):
    store, _ = store_of(tmp_path)
    steps = StoredSteps(store, monkeypatch)
    got = swept_by(store, steps).run()
    assert got.run_id and len(steps.ids) == 3
    run = store.get_run(got.run_id)
    assert run["status"] == "complete" and run["study_name"] == "density native"
    assert run["study"]["density"]["benches"] == ["cyclepi:steps=200000000"]
    # every step's run names its sweep
    assert [sweep.sweep_of(store.get_run(i)) for i in steps.ids] == [got.run_id] * 3
    back = analysis.analyze_run(store, got.run_id)
    assert back.density == got and back.run.id == got.run_id
    data = json.loads(reports.render(back, "json"))
    assert data["run"]["status"] == "complete" and data["results"] == []
    curve = data["density"]["curves"][0]
    assert (curve["knee"], curve["stop_reason"]) == (2, "qos")
    assert [s["run_id"] for s in curve["steps"]] == steps.ids
    assert DensityReport.of(data["density"]) == got
    text = reports.render(back, "table")
    assert f"density sweep {got.run_id}" in text and "knee at 2 guest(s), stop qos" in text
    assert "2 (knee)" in text


@pytest.mark.parametrize("fmt, says", [
    ("markdown", "| native | cyclepi[steps=200000000] | 2 (knee) |"),
    ("html", "knee: 2 (qos)"),
    ("latex", r"\begin{tabular}"),
    ("csv", "run_id,environment,reference,benchmark")])
def test_every_format_shows_a_stored_sweep(tmp_path, monkeypatch, fmt, says):
    store, _ = store_of(tmp_path)
    got = swept_by(store, StoredSteps(store, monkeypatch)).run()
    out = reports.render(analysis.analyze_run(store, got.run_id), fmt)
    assert says in out and got.run_id in out


def test_an_interrupted_sweep_keeps_the_steps_that_finished(tmp_path, monkeypatch):
    from io import StringIO
    from rich.console import Console
    store, _ = store_of(tmp_path)
    steps = StoredSteps(store, monkeypatch, stop_at=3)
    said = StringIO()
    interrupted = swept_by(store, steps)
    interrupted.console = Console(file=said, width=300)
    with pytest.raises(KeyboardInterrupt):
        interrupted.run()
    (listed,) = [r for r in store.list_runs() if sweep.is_sweep(r)]
    assert listed["status"] == "interrupted"
    assert f"density sweep {listed['id']} interrupted: its 2 finished step(s) are kept" \
        in said.getvalue()
    back = analysis.analyze_run(store, listed["id"]).density
    assert back.stop_reason == "interrupted" and back.finished
    assert [s.count for s in back.curves[0].steps] == [1, 2]
    assert [s.run_id for s in back.curves[0].steps] == steps.ids


def test_each_step_is_stored_as_it_finishes(tmp_path, monkeypatch):
    """Read between steps (as `virtbench report` would while it runs): the steps so far."""
    store, _ = store_of(tmp_path)
    seen = []
    steps = StoredSteps(store, monkeypatch)

    def step(study):
        if steps.ids:
            sweep_id = sweep.sweep_of(store.get_run(steps.ids[-1]))
            stored = analysis.analyze_run(store, sweep_id)
            seen.append((stored.run.status, [s.count for s in stored.density.curves[0].steps]))
        return steps(study)
    swept_by(store, step).run()
    assert seen == [("running", [1]), ("running", [1, 2])]


def test_runs_lists_the_sweep_and_its_steps(tmp_path, monkeypatch, capsys):
    store, url = store_of(tmp_path)
    steps = StoredSteps(store, monkeypatch, stop_at=3)
    with pytest.raises(KeyboardInterrupt):
        swept_by(store, steps).run()
    assert main(["runs", "--store", url]) == 0
    out = capsys.readouterr().out
    (sweep_id,) = [r["id"] for r in store.list_runs() if sweep.is_sweep(r)]
    assert "(density sweep)" in out
    assert out.count(f"step of density sweep {sweep_id}") == 2
    # an interrupted sweep is run again, not resumed: no `run --resume` offered for it
    assert f"--resume {sweep_id}" not in out
    assert main(["run", "--resume", sweep_id, "--store", url]) == 2
    assert "density sweep" in capsys.readouterr().err
    # the web view's list says the same
    from virtbench.interface.web import site
    page = site.runs_page(Store(url, read_only=True), {})
    assert "density native (density sweep)" in page
    assert page.count(f"a step of density sweep {sweep_id}") == 2
    assert f"--resume {sweep_id}" not in page


def test_a_damaged_stored_sweep_is_one_line(tmp_path, monkeypatch, capsys):
    store, url = store_of(tmp_path)
    got = swept_by(store, StoredSteps(store, monkeypatch)).run()
    store.update_run_detail(got.run_id, density={"curves": "none"})
    assert main(["report", got.run_id, "--store", url]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"virtbench: run {got.run_id}: its stored density sweep cannot "
                          "be read") and "\n" not in err


def test_figures_draws_a_stored_sweeps_curve(tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    from virtbench.results.report.figures import densitypaper, paper
    store, url = store_of(tmp_path)
    got = swept_by(store, StoredSteps(store, monkeypatch)).run()
    back = analysis.analyze_run(store, got.run_id)
    (fig,) = densitypaper.density_figures(back)
    assert [f.name for f in paper.paper_figures(back)] == [fig.name]   # no results: only it
    assert fig.name == "density-cyclepi[steps=200000000]-seconds"
    top, bottom, *right = fig.figure.axes
    curve = got.curves[0]
    (bars,) = top.containers                          # the aggregate, with its CIs
    assert bars.get_label() == "aggregate"
    assert list(bars.lines[0].get_ydata()) == [s.aggregate.mean for s in curve.steps]
    floor = [ln for ln in bottom.get_lines() if "QoS floor" in ln.get_label()]
    assert floor and floor[0].get_ydata()[0] == pytest.approx(
        0.5 * curve.steps[0].per_guest[0].mean)
    knee = [ln for ln in bottom.get_lines() if list(ln.get_xdata()) == [2, 2]]
    assert knee                                           # the knee's line, at 2 guests
    assert not right                   # native swept itself: no reference axis
    out = tmp_path / "figs"
    assert main(["figures", got.run_id, "-o", str(out), "--format", "svg", "--store", url]) == 0
    assert [p.name for p in out.iterdir()] == ["density-cyclepi_steps_200000000_-seconds.svg"]


def test_the_figure_draws_the_reference_curve_on_its_own_axis():
    """A real sweep of TCG guests with native processes beside (fixtures/density)."""
    pytest.importorskip("matplotlib")
    from virtbench.foundations.model import RunReport
    from virtbench.results.report.figures import densitypaper
    from test_density import FIX
    sweep_report = DensityReport.of(json.loads((FIX / "qemu-cyclepi-stream.json").read_text()))
    figs = densitypaper.density_figures(RunReport(density=sweep_report))
    assert [f.name for f in figs] == ["density-cyclepi-seconds", "density-stream-copy_mb_s"]
    _, _, right = figs[0].figure.axes
    ref = next(c for c in sweep_report.curves if c.reference and c.benchmark == "cyclepi")
    (line,) = right.get_lines()
    assert list(line.get_ydata()) == [s.aggregate.mean for s in ref.steps]
    assert "native" in line.get_label()


def test_history_lines_up_the_sweeps_knees(tmp_path, monkeypatch):
    """Three sweeps (their fake steps left running: only the sweeps are lined up): one
    series of the knee, a point per sweep; the other series of a history are unchanged."""
    from virtbench.results.history import history
    store, _ = store_of(tmp_path)
    ids = []
    for _ in range(3):
        steps = StoredSteps(store, monkeypatch)
        steps.status = "running"
        ids.append(swept_by(store, steps).run().run_id)
    got = history(store)
    (series,) = got.series
    assert (series.metric, series.environment, series.unit) == ("density_knee", "native",
                                                                 "guests")
    assert [p.run for p in series.points] == ids
    assert [p.value for p in series.points] == [2.0, 2.0, 2.0]


def test_a_step_runs_report_names_its_sweep(tmp_path):
    """A run of the real runner (fake environments) marked as a sweep's step, as the sweep
    marks it: its JSON report and its text header name the sweep."""
    from runkit import Flaky, Quiet, run_study
    store, _ = store_of(tmp_path)
    step = run_study(store, [Quiet("one")], {"flaky": Flaky(fail_on=set())}, trials=2)
    before = analysis.analyze_run(store, step.run_id)
    assert before.run.density_sweep is None
    store.update_run_detail(step.run_id, density_sweep="20261129-000000-abcd")
    after = analysis.analyze_run(store, step.run_id)
    assert after.run.density_sweep == "20261129-000000-abcd" and after.density is None
    assert json.loads(reports.render(after, "json"))["run"]["density_sweep"] == \
        "20261129-000000-abcd"
    assert "a step of density sweep 20261129-000000-abcd" in reports.render(after, "markdown")


def test_a_sweeps_artifact_holds_its_report_and_figure(tmp_path, monkeypatch, capsys):
    """`virtbench export SWEEP_ID`: the sweep's JSON report and its density figure."""
    pytest.importorskip("matplotlib")
    store, url = store_of(tmp_path)
    got = swept_by(store, StoredSteps(store, monkeypatch)).run()
    out = tmp_path / "art"
    assert main(["export", got.run_id, "--artifact", str(out), "--store", url]) == 0
    figures = sorted(p.name for p in (out / "figures").iterdir())
    assert "density-cyclepi_steps_200000000_-seconds.pdf" in figures
    data = json.loads((out / "report" / "report.json").read_text())
    assert data["density"]["run_id"] == got.run_id and data["density"]["curves"]


def test_report_lays_a_sweeps_steps_out_as_density_does_in_a_pipe(tmp_path, monkeypatch,
                                                                   capsys):
    """Piped, a run's compact report is 100 columns; a sweep's steps table is density's own,
    laid out in 200 (its header on one line, not cut into syllables)."""
    store, url = store_of(tmp_path)
    got = swept_by(store, StoredSteps(store, monkeypatch)).run()
    monkeypatch.delenv("COLUMNS", raising=False)
    assert main(["report", got.run_id, "--store", url]) == 0
    out = capsys.readouterr().out
    header = [line for line in out.splitlines() if "┃ environment" in line]
    assert len(header) == 1 and "slowest / one guest" in header[0], out
