"""Measured sections long enough to measure: the runner calibrates each case once per run,
repeats a short section inside every trial until it reaches the minimum, stores the loop count
for --resume and says a section was short only when it could not be repeated to the minimum."""
from __future__ import annotations

import io
import json

import pytest
from rich.console import Console
from runkit import Quiet, one_study

from virtbench.measure.benchmarks.base import Benchmark, Metric, Span, Timing, kernel_result, number
from virtbench.core.outcome import TrialOutcome
from virtbench.execution.run.runner import Prepared, Runner
from virtbench.execution.run.sections import calibration_of, more_needed, run_repeated, short_warning
from virtbench.foundations.store import Store


class Timed(Benchmark):
    """Stamps a section of `section[env]` seconds; its value is the call number."""
    name, family = "timed", "test"
    metrics = (Metric("seconds", "s", False),)
    timed = ("seconds",)

    def __init__(self, section, stop_at=None):
        self.section, self.calls, self.stop_at = section, {}, stop_at
        self.total = 0

    def run_trial(self, env, params):
        self.total += 1
        if self.stop_at is not None and self.total == self.stop_at:
            raise KeyboardInterrupt
        n = self.calls[env.label] = self.calls.get(env.label, 0) + 1
        s = self.section[env.label]
        line = json.dumps({"kernel": "timed", "seconds": float(n), "start_s": 100.0,
                           "end_s": 100.0 + s})
        return TrialOutcome(values={"seconds": float(n)}, stdout=line + "\n", exit=0, wall_s=s)

    def timing(self, stdout):
        r = kernel_result(stdout, "timed")
        return Timing({"seconds": [Span(number(r, "start_s"), number(r, "end_s"), 0.0)]}, None)


def _prepared(bench, trials=2, baseline="ref", envs=("ref", "b"), min_section=0.5):
    study = one_study(trials=trials, min_section_s=min_section)
    return Prepared(study, {e: Quiet(e) for e in envs}, {"timed": (bench, {})}, baseline)


def _runner(store):
    out = io.StringIO()
    return Runner(store, console=Console(file=out, width=300), show_progress=False), out


def test_a_short_section_is_calibrated_once_in_the_reference_and_repeated(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    bench = Timed({"ref": 0.1, "b": 0.2})
    runner, out = _runner(store)
    run = runner.start(_prepared(bench))
    cal = store.get_run(run.run_id)["detail"]["calibration"]["timed"]
    assert cal == {"repetitions": 5, "section_s": 0.1, "environment": "ref",
                   "min_section_s": 0.5, "capped": False}
    # three calibration runs in the reference, then 2 trials x 5 repetitions in each
    assert bench.calls == {"ref": 3 + 10, "b": 10}
    trials = {(t["environment"], t["trial"]): t for t in store.trials(run.run_id)}
    first_b = trials[("b", 0)]["detail"]
    assert first_b["repetitions"] == 5
    assert first_b["per_repetition"] == {"seconds": [1.0, 2.0, 3.0, 4.0, 5.0]}
    assert first_b["section_s"] == pytest.approx(1.0)
    values = {(s["environment"], s["trial"]): s["value"] for s in store.samples(run.run_id)}
    assert values[("b", 0)] == 3.0 and values[("b", 1)] == 8.0       # mean per repetition
    assert "timed: measured section 0.1 s on ref, below 0.5 s: 5 repetitions" in out.getvalue()
    assert not [w for w in store.warnings(run.run_id) if w["kind"] == "short_section"]


def test_a_section_shorter_than_calibrated_is_repeated_on_to_the_minimum_and_not_warned(
        tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    bench = Timed({"ref": 0.1, "b": 0.05})         # calibrated in ref: b's 5 x 0.05 s = 0.25 s
    runner, _ = _runner(store)
    run = runner.start(_prepared(bench, trials=3))
    assert not [w for w in store.warnings(run.run_id) if w["kind"] == "short_section"]
    b = [t["detail"] for t in store.trials(run.run_id) if t["environment"] == "b"]
    assert {d["repetitions"] for d in b} == {10}             # 10 x 0.05 s reaches 0.5 s
    assert [d["section_s"] for d in b] == [pytest.approx(0.5)] * 3
    ref = [t["detail"] for t in store.trials(run.run_id) if t["environment"] == "ref"]
    assert {d["repetitions"] for d in ref} == {5}


class Grouped(Quiet):
    """A group of 2 instances: its trials run once, never repeated."""

    @property
    def instance_count(self) -> int:
        return 2


def test_a_group_that_cannot_repeat_its_short_section_is_said_once_with_why(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    bench = Timed({"ref": 0.1, "b": 0.1})
    study = one_study(trials=3, min_section_s=0.5)
    prepared = Prepared(study, {"ref": Quiet("ref"), "b": Grouped("b")},
                        {"timed": (bench, {})}, "ref")
    runner, _ = _runner(store)
    run = runner.start(prepared)
    short = [w for w in store.warnings(run.run_id) if w["kind"] == "short_section"]
    assert [(w["environment"], w["benchmark"]) for w in short] == [("b", "timed")]
    assert short[0]["message"].startswith(
        "timed on b: the measured section lasted 0.1 s per trial (1 repetition(s)), below the "
        "minimum of 0.5 s (a group of instances runs its section once per trial)")


def test_a_resumed_run_repeats_its_stored_loop_count_without_calibrating(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    runner, _ = _runner(store)
    first = runner.start(_prepared(Timed({"ref": 0.1, "b": 0.1}, stop_at=3 + 5 + 2), trials=3))
    assert first.status == "interrupted"
    again = Timed({"ref": 0.3, "b": 0.3})          # would calibrate to 2 if it calibrated
    runner2, _ = _runner(store)
    outcome = runner2._execute(first.run_id, _prepared(again, trials=3))
    assert outcome.status == "complete"
    assert sum(again.calls.values()) % 5 == 0 and again.calls["ref"] % 5 == 0
    assert {t["detail"]["repetitions"] for t in store.trials(first.run_id)} == {5}


def test_no_minimum_no_calibration(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    bench = Timed({"ref": 0.01, "b": 0.01})
    runner, _ = _runner(store)
    run = runner.start(_prepared(bench, min_section=0))
    assert bench.calls == {"ref": 2, "b": 2}
    assert "calibration" not in (store.get_run(run.run_id)["detail"] or {})


def test_calibration_counts_and_caps():
    assert calibration_of(0.034, "native", 0.5).repetitions == 15
    capped = calibration_of(1e-5, "native", 0.5, most=200)
    assert capped.repetitions == 200 and capped.capped
    assert calibration_of(None, "native", 0.5).repetitions == 1


def test_repetitions_stop_at_the_first_failure():
    calls = []

    def once():
        calls.append(1)
        return TrialOutcome(error="exit status 1: no") if len(calls) == 2 else \
            TrialOutcome(values={"seconds": 1.0})
    out = run_repeated(once, Timed({}), Timed.metrics, 5, lambda exc: None)
    assert len(calls) == 2 and out.error == "repetition 2 of 2: exit status 1: no"


def test_the_short_warning_wants_a_known_short_section_that_could_not_be_repeated():
    ok = TrialOutcome(values={"x": 1.0}, detail={"section_s": 0.3, "repetitions": 2})
    # virtbench could have repeated it: its own choice, never a warning
    assert short_warning("pi", "native", ok, 0.5) is None
    assert "0.3 s per trial (2 repetition(s)), below the minimum of 0.5 s (a group of " \
        "instances runs its section once per trial)" in \
        short_warning("pi", "native/x2", ok, 0.5, repeatable=False)
    assert "(the cap of 2 repetitions was reached)" in short_warning("pi", "native", ok, 0.5,
                                                                      most=2)
    assert short_warning("pi", "native", ok, 0.2, repeatable=False) is None
    assert short_warning("pi", "native", TrialOutcome(values={"x": 1.0}), 0.5,
                         repeatable=False) is None


def test_more_repetitions_until_the_minimum_the_cap_or_an_unknown_section():
    assert more_needed([], 1, 0.5)                              # always one
    assert more_needed([0.039] * 12, 13, 0.5)                   # the planned 13 first
    assert more_needed([0.0368] * 13, 13, 0.5)                  # 0.478 s: one more
    assert not more_needed([0.0368] * 14, 13, 0.5)              # 0.515 s: reached
    assert not more_needed([0.01] * 13, 13, 0.5, most=13)       # the cap
    assert not more_needed([0.01, None], 1, 0.5)                # a section not known
    assert not more_needed([0.01], 1, 0.0)                      # no minimum: as planned
    assert more_needed([0.4], 1, 0.5)                           # calibrated long, ran short


def test_run_repeated_goes_on_until_the_sections_reach_the_minimum():
    bench = Timed({"x": 0.0368})
    env = Quiet("x")
    out = run_repeated(lambda: bench.run_trial(env, {}), bench, Timed.metrics, 13,
                       lambda exc: None, 0.5)
    assert out.ok and out.detail["repetitions"] == 14
    assert out.detail["section_s"] == pytest.approx(14 * 0.0368)
    assert out.detail["per_repetition"] == {"seconds": [float(i) for i in range(1, 15)]}
