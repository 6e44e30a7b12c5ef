"""A tune run (issue 40) through the runner: the screening's blocks, then the recommended
configuration against the base in the same run (execution/run/tune.py), decided and reported
(results/analysis/tune.py); resumable; nothing to confirm when no knob matters."""
from __future__ import annotations

import io
import random
from dataclasses import replace

from rich.console import Console
from runkit import Quiet, one_study

import virtbench.execution.run.tune as tune_stage
from virtbench.core.decisions import Decided, Direction
from virtbench.core.outcome import TrialOutcome
from virtbench.execution.run.runner import Prepared, Runner
from virtbench.foundations.store import Store
from virtbench.measure.benchmarks.base import Benchmark, Metric
from virtbench.results.analysis import analyze_run
from virtbench.study.design import tuned
from virtbench.study.tune import TuneEntry, parse_knob


class Seconds(Benchmark):
    """A time per environment: `level(label)` with `cv` noise (seeded); `stop_at`: the call
    that is interrupted (Ctrl-C), counting from 1."""
    name, family = "seconds", "test"
    metrics = (Metric("seconds", "s", False),)

    def __init__(self, level, cv=0.01, stop_at: int | None = None):
        self.level, self.cv, self.rng = level, cv, random.Random(7)
        self.calls: list[str] = []
        self.stop_at = stop_at

    def run_trial(self, env, params):
        self.calls.append(env.label)
        if self.stop_at is not None and len(self.calls) == self.stop_at:
            raise KeyboardInterrupt
        v = self.level(env.label) * (1 + self.cv * self.rng.gauss(0, 1))
        return TrialOutcome(values={"seconds": v}, exit=0, wall_s=0.01)


ENTRY = TuneEntry(base="container:cpus=0.5",
                  knobs=[parse_knob("cpus=0.5,2"), parse_knob("mem=512M,4G")])
SLOW = {"base", "c1", "c2"}            # cpus=0.5: the design's first two rows, and the base


def quota(label: str) -> float:
    return 2.0 if label in SLOW else 1.0


def _prepared(bench, entry=ENTRY, **overrides) -> Prepared:
    """The tune's plan with fakes: Quiet environments, `bench` for its one case;
    `overrides`: fields of its study."""
    study = replace(tuned(one_study(cases=[("x", "pi")]), entry), **overrides)
    labels = ["base"] + [name for name, _ in entry.configurations()]
    return Prepared(study, {label: Quiet(label) for label in labels}, {"x": (bench, {})},
                    "base")


def _start(tmp_path, bench, monkeypatch, entry=ENTRY, **overrides):
    made: list[str] = []

    def make(spec):
        made.append(spec)
        return Quiet("recommended")
    monkeypatch.setattr(tune_stage, "make_environment", make)
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    out = io.StringIO()
    runner = Runner(store, console=Console(file=out, width=300), show_progress=False)
    return store, runner, runner.start(_prepared(bench, entry, **overrides)), out, made


def _by_block(store, run_id):
    blocks: dict[int, list[str]] = {}
    for t in store.trials(run_id):
        blocks.setdefault(t["trial"], []).append(t["environment"])
    return blocks


def test_the_quota_matters_and_the_recommendation_is_confirmed(tmp_path, monkeypatch):
    store, _, outcome, out, made = _start(tmp_path, Seconds(quota), monkeypatch)
    assert outcome.status == "complete"
    assert made == ["container:cpus=2,name=recommended"]
    blocks = _by_block(store, outcome.run_id)
    assert [sorted(blocks[b]) for b in range(3)] == [["base", "c1", "c2", "c3", "c4"]] * 3
    assert [sorted(blocks[b]) for b in range(3, 9)] == [["base", "recommended"]] * 6
    assert max(blocks) == 8
    detail = store.get_run(outcome.run_id)["detail"]["tune"]
    assert detail["recommended"] == {"cpus": "2"} and detail["first_block"] == 3
    assert "tune: recommended cpus=2; confirming it against the base in 6 block(s)" in \
        out.getvalue()
    tune = analyze_run(store, outcome.run_id).tune
    cpus, mem = tune.knobs
    assert (cpus.knob, cpus.decision, cpus.better_level) == ("cpus", "matters", "2")
    assert -52 < cpus.effect_pct < -48                       # 0.5 -> 2 halves the time
    assert (mem.knob, mem.decision) == ("mem", "no effect")
    assert tune.recommended == {"cpus": "2"} and tune.confirmation == "recommended"
    vs = tune.confirmed
    assert tune.recommendations[0].confirmed == vs
    assert vs.verdict == Decided.FAIL and vs.direction == Direction.BETTER
    assert tune.headline.startswith("recommended: cpus=2: 2.00× faster on x [")
    assert ", confirmed; mem: no effect (within ±5 %)" in tune.headline


def test_no_knob_that_matters_leaves_the_base_and_runs_nothing_more(tmp_path, monkeypatch):
    store, _, outcome, out, made = _start(tmp_path, Seconds(lambda label: 1.0), monkeypatch)
    assert outcome.status == "complete" and made == []
    assert max(_by_block(store, outcome.run_id)) == 2
    assert store.get_run(outcome.run_id)["detail"]["tune"] == {"recommended": {}}
    assert ("tune: nothing to change (no knob matters, or the base has its better level); "
            "the base stays, nothing to confirm") in out.getvalue()
    tune = analyze_run(store, outcome.run_id).tune
    assert tune.recommended == {} and tune.confirmed is None
    assert tune.headline.startswith("keep the base: no knob matters on seconds of x; cpus: ")


def test_an_interrupted_confirmation_resumes_the_same_configuration(tmp_path, monkeypatch):
    bench = Seconds(quota, stop_at=15 + 5)      # 15 screening trials, then 4 of the A/B
    store, runner, outcome, _, made = _start(tmp_path, bench, monkeypatch)
    assert outcome.status == "interrupted"
    before = _by_block(store, outcome.run_id)
    assert sum(envs.count("recommended") for envs in before.values()) < 6
    bench.stop_at = None
    stored = store.get_run(outcome.run_id)["study"]
    prepared = _prepared(bench)
    assert stored["tune"]["base"] == prepared.study.tune.base
    again = runner._execute(outcome.run_id, prepared.for_run(prepared.study.seed))
    assert again.status == "complete"
    assert made == ["container:cpus=2,name=recommended"] * 2     # the stored spec, again
    blocks = _by_block(store, outcome.run_id)
    assert [sorted(blocks[b]) for b in range(3, 9)] == [["base", "recommended"]] * 6
    assert sum(len(envs) for envs in blocks.values()) == 15 + 12  # each slot once


def _adaptive(monkeypatch, answers):
    """An adaptive tune (min 3, max 12 blocks: looks after 3, 6 and 12) whose undecided
    knobs are `answers`, one list per look; returns the looks it was asked at."""
    asked: list[int] = []

    def undecided(store, run_id):
        asked.append(len({t["trial"] for t in store.trials(run_id)}))
        return answers.pop(0) if answers else []
    monkeypatch.setattr(tune_stage, "undecided_knobs", undecided)
    return asked


AUTO = dict(adaptive=True, trials=3, min_trials=3, max_trials=12)


def test_an_adaptive_screening_runs_to_the_next_look_while_a_knob_is_undecided(
        tmp_path, monkeypatch):
    asked = _adaptive(monkeypatch, [["x · seconds: mem (>= 5 blocks would decide)"], []])
    store, _, outcome, out, made = _start(tmp_path, Seconds(quota), monkeypatch, **AUTO)
    assert outcome.status == "complete" and asked == [3, 6]
    blocks = _by_block(store, outcome.run_id)
    assert [sorted(blocks[b]) for b in range(6)] == [["base", "c1", "c2", "c3", "c4"]] * 6
    assert [sorted(blocks[b]) for b in range(6, 12)] == [["base", "recommended"]] * 6
    detail = store.get_run(outcome.run_id)["detail"]
    assert detail["tune_screening"] == {"target": 6, "stopped": "all decided",
                                        "undecided": [], "looks": [3, 6, 12]}
    assert detail["tune"]["first_block"] == 6
    text = out.getvalue()
    assert ("tune: after 3 block(s) undecided: x · seconds: mem (>= 5 blocks would decide); "
            "running to 6") in text
    assert "tune: screening stopped (all decided) after 6 block(s)" in text


def test_an_adaptive_screening_stops_at_its_last_look_and_says_what_is_undecided(
        tmp_path, monkeypatch):
    left = ["x · seconds: mem"]
    _adaptive(monkeypatch, [left, left, left])
    store, _, outcome, out, _ = _start(tmp_path, Seconds(quota), monkeypatch, **AUTO)
    assert outcome.status == "complete"
    blocks = _by_block(store, outcome.run_id)
    assert sorted(blocks[11]) == ["base", "c1", "c2", "c3", "c4"]     # 12 screening blocks
    screening = store.get_run(outcome.run_id)["detail"]["tune_screening"]
    assert screening["stopped"] == "max_trials" and screening["undecided"] == left
    assert "tune: screening stopped (max_trials) after 12 block(s); undecided: " \
           "x · seconds: mem" in out.getvalue()


def test_a_recommendation_that_cannot_be_made_is_warned_and_the_run_completes(
        tmp_path, monkeypatch):
    from virtbench.core.errors import VirtbenchError

    def refuse(spec):
        raise VirtbenchError(f"environment {spec}: not usable here: podman is missing")
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    out = io.StringIO()
    monkeypatch.setattr(tune_stage, "make_environment", refuse)
    runner = Runner(store, console=Console(file=out, width=300), show_progress=False)
    outcome = runner.start(_prepared(Seconds(quota)))
    assert outcome.status == "complete"
    (warning,) = [w for w in store.warnings(outcome.run_id) if w["kind"] == "tune_unconfirmed"]
    assert warning["message"] == (
        "the recommended configuration (container:cpus=2,name=recommended) was not confirmed "
        "against the base: environment container:cpus=2,name=recommended: not usable here: "
        "podman is missing")
    assert "tune: the recommendation cannot be confirmed in this run: " in out.getvalue()
    tune = analyze_run(store, outcome.run_id).tune
    assert tune.recommended == {"cpus": "2"} and tune.confirmed is None


def _refine_run(tmp_path, monkeypatch, seconds_of_cpus, refine=1):
    """A tune of cpus=0.5,1,2 and mem with --refine: each environment's time is
    `seconds_of_cpus[its cpus]`; the configurations made after the plan are recorded."""
    from virtbench.measure.environments import EnvSpec
    entry = TuneEntry(base="container:cpus=0.5",
                      knobs=[parse_knob("cpus=0.5,1,2"), parse_knob("mem=512M,4G")],
                      refine=refine)
    cpus_of = {"base": "0.5", **{name: lv["cpus"] for name, lv in entry.configurations()}}
    made: list[str] = []

    def make(spec):
        parsed = EnvSpec.parse(spec)
        made.append(spec)
        cpus_of[parsed.options["name"]] = parsed.options["cpus"]
        return Quiet(parsed.options["name"])
    monkeypatch.setattr(tune_stage, "make_environment", make)
    import virtbench.execution.run.refine as refine_stage
    monkeypatch.setattr(refine_stage, "make_environment", make)
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    out = io.StringIO()
    runner = Runner(store, console=Console(file=out, width=300), show_progress=False)
    bench = Seconds(lambda label: seconds_of_cpus[cpus_of[label]])
    outcome = runner.start(_prepared(bench, entry))
    return store, outcome, out.getvalue(), made


def test_a_refinement_that_finds_nothing_better_keeps_the_screenings_best(tmp_path,
                                                                        monkeypatch):
    store, outcome, text, made = _refine_run(tmp_path, monkeypatch,
                                             {"0.5": 2.0, "1": 1.0, "2": 1.0})
    assert outcome.status == "complete"
    assert made == ["container:cpus=2,name=r0", "container:cpus=1,name=r1",
                    "container:cpus=2,name=recommended"]
    record = store.get_run(outcome.run_id)["detail"]["tune_refine"]
    assert record["best"] == {"cpus": "2"} and record["stopped"] == "done"
    assert [(s["level"], s["reference"], s["moved"]) for s in record["steps"]] == \
        [("1", "r0", False)]
    blocks = _by_block(store, outcome.run_id)
    assert [sorted(blocks[b]) for b in range(3, 6)] == [["r0", "r1"]] * 3
    assert [sorted(blocks[b]) for b in range(6, 12)] == [["base", "recommended"]] * 6
    assert "tune: refining cpus: cpus=1 (r1) against the best so far (r0)" in text
    tune = analyze_run(store, outcome.run_id).tune
    (step,) = tune.refinement
    assert (step.level, step.moved, step.vs_best.verdict) == ("1", False, Decided.PASS)
    assert tune.recommended == {"cpus": "2"}
    assert tune.confirmed.verdict == Decided.FAIL


def test_a_level_between_the_ends_that_is_better_becomes_the_recommendation(tmp_path,
                                                                          monkeypatch):
    store, outcome, _, made = _refine_run(tmp_path, monkeypatch,
                                          {"0.5": 2.0, "1": 0.7, "2": 1.0})
    assert made[-1] == "container:cpus=1,name=recommended"
    record = store.get_run(outcome.run_id)["detail"]["tune_refine"]
    assert record["best"] == {"cpus": "1"} and record["best_label"] == "r1"
    tune = analyze_run(store, outcome.run_id).tune
    assert tune.refinement[0].moved is True
    assert tune.recommended == {"cpus": "1"}
    assert tune.headline.startswith("recommended: cpus=1: 2.8")      # 2.0 s -> 0.7 s
    assert "× faster on x [" in tune.headline and "], confirmed; mem: " in tune.headline
    from virtbench.results.report.fmt import tune as tune_fmt
    lines = tune_fmt.lines(analyze_run(store, outcome.run_id))
    import re
    assert any(re.fullmatch(r"refine: cpus=1 \(r1\) against r0: (29|30|31)\.\d % faster "
                            r"\[-\d+\.\d, -\d+\.\d\]: the new best", line)
               for line in lines), lines


def test_an_adaptive_tunes_ab_runs_on_while_it_is_inconclusive(tmp_path, monkeypatch):
    _adaptive(monkeypatch, [[]])                       # every knob decided at the first look
    answers = [True, True, False]
    monkeypatch.setattr(tune_stage, "ab_undecided", lambda store, run_id: answers.pop(0))
    store, _, outcome, _, _ = _start(tmp_path, Seconds(quota), monkeypatch, **AUTO)
    assert outcome.status == "complete" and answers == []
    blocks = _by_block(store, outcome.run_id)
    assert [sorted(blocks[b]) for b in range(3, 11)] == [["base", "recommended"]] * 8
    assert max(blocks) == 10
    assert store.get_run(outcome.run_id)["detail"]["tune"]["blocks"] == 8


def test_an_adaptive_tunes_ab_stops_at_max_trials(tmp_path, monkeypatch):
    _adaptive(monkeypatch, [[]])
    monkeypatch.setattr(tune_stage, "ab_undecided", lambda store, run_id: True)
    store, _, outcome, _, _ = _start(tmp_path, Seconds(quota), monkeypatch, **AUTO)
    assert store.get_run(outcome.run_id)["detail"]["tune"]["blocks"] == 12     # max_trials
    assert max(_by_block(store, outcome.run_id)) == 3 + 12 - 1


def test_a_base_that_already_has_the_better_level_is_kept_and_nothing_is_confirmed(
        tmp_path, monkeypatch):
    entry = TuneEntry(base="container:cpus=2",
                      knobs=[parse_knob("cpus=0.5,2"), parse_knob("mem=512M,4G")])
    fast = {"base", "c3", "c4"}                      # cpus=2: the design's last two rows

    def seconds(label):
        return 1.0 if label in fast else 2.0
    store, _, outcome, _, made = _start(tmp_path, Seconds(seconds), monkeypatch, entry)
    assert outcome.status == "complete" and made == []
    assert store.get_run(outcome.run_id)["detail"]["tune"] == {"recommended": {}}
    tune = analyze_run(store, outcome.run_id).tune
    assert tune.knobs[0].decision == "matters" and tune.knobs[0].better_level == "2"
    assert tune.recommended == {} and tune.kept == {"cpus": "2"}
    assert tune.headline.startswith("keep the base: it already has the better level of what "
                                    "matters (cpus=2); mem: no effect")
