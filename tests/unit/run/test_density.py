"""Consolidation density: throughputs from a step's samples, the QoS rule and the knee
(vmlife/density.py), the sweep's loop and its stop reasons (density/sweep.py), the report
in every format; on real reports of a real sweep (tests/fixtures/density/README.md)."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from virtbench.results import report as reports
from virtbench.execution.run import density as sw
from virtbench.core import defaults
from virtbench.core.errors import VirtbenchError
from virtbench.foundations.model import RunReport
from virtbench.foundations.model.density import DensityCurve, DensityReport
from virtbench.machinery.vmlife import density as dens

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "density"


def real(count: int) -> RunReport:
    return RunReport.of(json.loads((FIX / f"native-cyclepi-x{count}.json").read_text()))


def case(report: RunReport) -> str:
    return report.benchmarks[0].label


def fig(mean: float) -> dens.Figure:
    return dens.Figure(mean, None, None, 3)


def step(count: int, aggregate: float, guests: list[float]) -> dens.Step:
    return dens.Step(count, fig(aggregate), [fig(g) for g in guests])


# -- pure: throughputs, fairness, the rule ------------------------------------------------
def test_times_become_jobs_per_second_and_rates_stay():
    assert dens.throughputs([2.0, 4.0], higher_is_better=False) == [0.5, 0.25]
    assert dens.throughputs([2.0], higher_is_better=False, jobs=3) == [1.5]   # N / makespan
    assert dens.throughputs([100.0, 0.0], higher_is_better=True) == [100.0, 0.0]
    assert dens.throughputs([0.0, -1.0], higher_is_better=False) == []


def test_jain_fairness():
    assert dens.jain([1.0, 1.0, 1.0]) == pytest.approx(1.0)
    assert dens.jain([1.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)
    assert dens.jain([]) is None and dens.jain([0.0, 0.0]) is None


def test_knee_where_a_guest_falls_under_the_floor():
    steps = [step(1, 10, [10]), step(2, 19, [9.5, 9.5]), step(3, 21, [9, 8, 4])]
    v = dens.judge(steps, dens.Rule(per_guest_floor=0.5))
    assert (v.knee, v.stop_reason) == (2, "qos") and "40%" in v.why


def test_knee_where_the_aggregate_stops_rising():
    steps = [step(1, 10, [10]), step(2, 19, [9.5, 9.5]), step(3, 19.5, [6.5, 6.5, 6.5]),
             step(4, 30, [7.5] * 4)]
    v = dens.judge(steps, dens.Rule(per_guest_floor=0.5, min_gain=0.05))
    assert (v.knee, v.stop_reason) == (2, "aggregate_flat")       # the first failure counts
    # a looser rule carries on past it
    assert dens.judge(steps, dens.Rule(min_gain=0.0)).knee == 4


def test_a_curve_still_scaling_has_no_stop_of_its_own():
    v = dens.judge([step(2, 19, [9.5, 9.5]), step(1, 10, [10])])   # any order
    assert (v.knee, v.stop_reason) == (2, None)
    assert dens.judge([]).knee is None


def test_rule_and_schedule_bounds():
    with pytest.raises(ValueError):
        dens.Rule(per_guest_floor=0)
    with pytest.raises(ValueError):
        dens.Rule(min_gain=1.5)
    assert [dens.next_count(n, "linear") for n in (1, 2)] == [2, 3]
    assert [dens.next_count(n, "doubling") for n in (1, 2)] == [2, 4]
    with pytest.raises(ValueError):
        dens.next_count(1, "fibonacci")


# -- a real sweep's steps -----------------------------------------------------------------
def test_steps_from_real_reports():
    one = sw.step_of(real(1), "native", case(real(1)), "seconds", 1)
    secs = next(r for r in real(1).results if r.metric == "seconds").samples
    assert one.aggregate.mean == pytest.approx(1 / (sum(secs) / 2), rel=0.01)
    assert len(one.per_guest) == 1 and one.per_guest[0] == one.aggregate

    three = sw.step_of(real(3), "native/x3", case(real(3)), "seconds", 3)
    rows = {r.metric: r.samples for r in real(3).results}
    assert three.aggregate.mean == pytest.approx(
        sum(3 / s for s in rows["seconds"]) / 2)                 # 3 jobs / the makespan
    assert [g.mean for g in three.per_guest] == pytest.approx(
        [sum(1 / s for s in rows[f"seconds_i{i}"]) / 2 for i in range(3)])
    # the wrong count, label or metric finds nothing
    assert sw.step_of(real(3), "native/x3", case(real(3)), "seconds", 2) is None
    assert sw.step_of(real(3), "native", case(real(3)), "seconds", 3) is None


def test_the_real_sweep_knee_and_stop():
    curve = DensityCurve(environment="native", benchmark="cyclepi", metric="seconds")
    for n, label in ((1, "native"), (2, "native/x2"), (3, "native/x3")):
        curve.steps.append(sw.step_of(real(n), label, case(real(n)), "seconds", n))
    sw.judge_curve(curve, dens.Rule())
    assert (curve.knee, curve.stop_reason) == (2, "qos")       # 2 cores: two at once scale
    assert curve.steps[0].slowest_share == 1.0
    assert curve.steps[2].slowest_share < 0.5 < curve.steps[1].slowest_share
    assert curve.steps[1].aggregate.mean > curve.steps[0].aggregate.mean
    assert 0 < curve.steps[2].fairness < 1


def test_memory_of_a_step_from_its_real_footprint_rows():
    """Reports of a real container sweep's steps 1 and 3 (fixtures/density/README.md)."""
    def rep(n):
        return RunReport.of(json.loads((FIX / f"container-cyclepi-x{n}.json").read_text()))
    one, three = rep(1), rep(3)
    label1, label3 = one.environments[0].label, three.environments[0].label
    pss1, over1 = sw.memory_of(one, label1, 1)
    row = next(r for r in one.results if r.environment == label1 and r.metric == "pss_mib")
    assert pss1 == row.trimmed_mean and 0 < over1 < pss1
    pss3, over3 = sw.memory_of(three, label3, 3)
    each = [r.trimmed_mean for r in three.results if r.environment == label3
            and r.metric_id.base == "pss_mib" and r.metric_id.scope == "instance"]
    assert len(each) == 3 and pss3 == pytest.approx(sum(each))
    assert 2 * pss1 < pss3 < 4 * pss1                 # three containers, each about one
    # the native reference has no footprint; a wrong count finds nothing
    assert sw.memory_of(three, "native/x3", 3) == (None, None)
    assert sw.memory_of(three, label3, 2) == (None, None)
    s = sw.step_of(three, label3, three.benchmarks[0].label, "seconds", 3)
    assert s is not None and len(s.per_guest) == 3


# -- the sweep's loop, on the real reports ----------------------------------------------
class Replay:
    """Steps answered by the real reports (the runner and the store faked)."""

    def __init__(self, monkeypatch):
        self.studies = []
        monkeypatch.setattr(sw, "analyze_run", lambda store, run_id: real(int(run_id)))

    def __call__(self, study) -> str:
        self.studies.append(study)
        count = len(self.studies)
        if count > 3:
            raise AssertionError("the sweep went on after its rule failed")
        return str(count)


def test_the_sweep_stops_where_its_rule_fails(monkeypatch):
    replay = Replay(monkeypatch)
    s = sw.Sweep(sw.DensityRequest("native", ["cyclepi:steps=200000000"], 8, trials=2),
                 run_step=replay, available=lambda: 2**40)
    got = s.run()
    assert [st.environments[0].spec for st in replay.studies] == \
        ["native", "native:instances=2", "native:instances=3"]
    assert got.stop_reason == "qos" and len(got.curves) == 1    # native: no reference of itself
    c = got.curves[0]
    assert (c.knee, c.stop_reason, [x.count for x in c.steps]) == (2, "qos", [1, 2, 3])
    assert c.unit == "jobs/s" and c.metric == "seconds"


def test_the_sweep_stops_at_its_max_memory_and_time(monkeypatch):
    s = sw.Sweep(sw.DensityRequest("native", ["cyclepi"], 2), run_step=Replay(monkeypatch),
                 available=lambda: 2**40)
    got = s.run()
    assert got.stop_reason == "max" and got.curves[0].stop_reason == "max"
    assert got.curves[0].knee == 2 and "maximum" in got.curves[0].why

    qemu = sw.Sweep(sw.DensityRequest("qemu:mem=1G", ["cyclepi"], 8, reference=False),
                    run_step=Replay(monkeypatch), available=lambda: 2.5 * 2**30)
    assert qemu._study(2).environments[0].spec == "qemu:mem=1G,instances=2"
    # two 1 GiB guests fit in 2.5 GiB, three do not: the sweep ends before step 3
    got = qemu.run()
    assert got.stop_reason == "memory" and [x.count for x in got.curves[0].steps] == [1, 2]

    clock = iter([0.0, 11.0])        # the sweep starts, then finds 11 s gone before step 1
    monkeypatch.setattr(sw, "time", SimpleNamespace(monotonic=lambda: next(clock)))
    late = sw.Sweep(sw.DensityRequest("native", ["cyclepi"], 8, max_s=10),
                    run_step=Replay(monkeypatch))
    got = late.run()
    assert got.stop_reason == "time" and got.curves == []


def test_a_failed_step_keeps_the_steps_before(monkeypatch):
    replay = Replay(monkeypatch)

    def step(study):
        if len(replay.studies) == 2:
            raise VirtbenchError("environment qemu: the guest did not boot")
        return replay(study)
    got = sw.Sweep(sw.DensityRequest("native", ["cyclepi"], 8), run_step=step,
                   available=lambda: 2**40).run()
    assert got.stop_reason == "failed" and "step 3: environment qemu" in got.failure
    assert [s.count for s in got.curves[0].steps] == [1, 2]
    assert got.curves[0].stop_reason == "failed" and got.curves[0].knee == 2


def test_a_reference_curve_runs_beside_and_is_not_judged(monkeypatch):
    s = sw.Sweep(sw.DensityRequest("container", ["cyclepi"], 3), run_step=Replay(monkeypatch),
                 available=lambda: None)
    study = s._study(3)
    assert [e.spec for e in study.environments] == ["container:instances=3",
                                                    "native:instances=3"]
    # a container's host memory is read at each step too (benchmark footprint)
    assert [c.name for c in study.benchmarks] == ["cyclepi", "footprint"]
    alone = sw.Sweep(sw.DensityRequest("native", ["cyclepi"], 2))
    assert [c.name for c in alone._study(1).benchmarks] == ["cyclepi"]


def test_bad_input_is_one_line():
    with pytest.raises(VirtbenchError, match="instances"):
        sw.DensityRequest("qemu:instances=2", ["cyclepi"], 4)
    with pytest.raises(VirtbenchError, match="--max"):
        sw.DensityRequest("qemu", ["cyclepi"], 0)
    with pytest.raises(VirtbenchError, match="no such metric"):
        sw.DensityRequest("native", ["cyclepi"], 2, metrics={"cyclepi": "mflops"})
    with pytest.raises(VirtbenchError, match="not a --bench"):
        sw.DensityRequest("native", ["cyclepi"], 2, metrics={"stream": "triad_mb_s"})
    assert sw.Sweep(sw.DensityRequest("native", ["stream"], 2)).cases == [("stream", "copy_mb_s")]
    assert sw.Sweep(sw.DensityRequest("native", ["stream"], 2, metrics={"stream": "triad_mb_s"})
                    ).cases == [("stream", "triad_mb_s")]


@pytest.mark.parametrize("changes, says", [
    ({"trials": 0}, "density --trials: from 1 to 100"),
    ({"schedule": "cubic"}, "density --schedule: linear or doubling"),
    ({"floor": 1.5}, "density: the per-guest floor is a share from 0 to 1"),
    ({"min_gain": 1.0}, "density: the aggregate's minimum gain"),
    ({"max_s": 0.0}, "density --max-time: a positive number of seconds"),
    ({"benches": []}, "density: give at least one --bench NAME")])
def test_a_density_request_is_checked_when_it_is_made(changes, says):
    """What the sweep is asked is checked where it is built: each bad value one line."""
    asked = {"spec": "native", "benches": ["cyclepi"], **changes}
    with pytest.raises(VirtbenchError) as err:
        sw.DensityRequest(**asked)
    assert str(err.value).startswith(says) and "\n" not in str(err.value)
    assert sw.DensityRequest("native", ["cyclepi"]).max_count == defaults.DENSITY_MAX_GUESTS


def test_cli_bad_input_exits_2_and_writes_nothing(tmp_path, capsys):
    from virtbench.interface.cli.commands import main
    store = tmp_path / "s.db"
    for argv in (["--env", "native", "--bench", "cyclepi", "--floor", "2"],
                 ["--env", "native", "--bench", "cyclepi", "--max-time", "0"],
                 ["--env", "native", "--bench", "cyclepi", "--trials", "0"],
                 ["--env", "native", "--bench", "cyclepi", "--metric", "cyclepi"],
                 ["--env", "native:instances=2", "--bench", "cyclepi"]):
        assert main(["density", *argv, "--store", f"sqlite:///{store}"]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not store.exists()


# -- the report ---------------------------------------------------------------------------
def sample_report(monkeypatch) -> DensityReport:
    return sw.Sweep(sw.DensityRequest("native", ["cyclepi:steps=200000000"], 8),
                    run_step=Replay(monkeypatch), available=lambda: 2**40).run()


def test_density_report_in_json_html_and_table(monkeypatch):
    got = sample_report(monkeypatch)
    data = json.loads(reports.render_density(got, "json"))
    assert data["curves"][0]["knee"] == 2 and data["curves"][0]["stop_reason"] == "qos"
    assert [s["count"] for s in data["curves"][0]["steps"]] == [1, 2, 3]
    assert DensityReport.of(data) == got.model_dump()
    html = reports.render_density(got, "html")
    assert "knee: 2 (qos)" in html and "QoS floor: 50% of one guest" in html
    assert html.count('class="chart"') == 1 and "<script" in html
    rows = reports.render_density(got, "csv").splitlines()
    assert len(rows) == 1 + (1 + 2 + 3)           # the header, a row per step x guest
    assert rows[0].startswith("run_id,environment,reference,benchmark")
    from io import StringIO
    from rich.console import Console
    from virtbench.results.report.formats.table import print_density
    buf = StringIO()
    print_density(got, Console(file=buf, width=200))
    assert "knee at 2 guest(s), stop qos" in buf.getvalue() and "2 (knee)" in buf.getvalue()


def test_a_real_qemu_sweep_judged_again_gives_its_knees():
    """The report of a real sweep of TCG guests (fixtures/density/README.md): judging its
    steps again gives the knees and stops it wrote, and the floor is what stopped it."""
    got = DensityReport.of(json.loads((FIX / "qemu-cyclepi-stream.json").read_text()))
    judged = {c.benchmark: c for c in got.curves if not c.reference}
    assert set(judged) == {"cyclepi", "stream"}
    for curve in got.curves:
        again = curve.model_copy(deep=True)
        again.knee = again.stop_reason = None
        sw.judge_curve(again, dens.Rule(got.rule.per_guest_floor, got.rule.min_gain))
        if not curve.reference:
            assert (again.knee, again.stop_reason) == (curve.knee, curve.stop_reason)
    cyc = judged["cyclepi"]
    assert (cyc.knee, cyc.stop_reason) == (2, "qos")
    assert cyc.steps[2].slowest_share < 0.5 <= cyc.steps[1].slowest_share
    assert cyc.steps[1].aggregate.mean > 1.05 * cyc.steps[0].aggregate.mean
    assert judged["stream"].knee == 1
    # the reference curves ran at the same counts
    refs = [c for c in got.curves if c.reference]
    assert {c.benchmark for c in refs} == {"cyclepi", "stream"}
    assert all([s.count for s in c.steps] == [1, 2, 3] for c in refs)
