"""Adaptive trials (trials = "auto"): after the minimum, blocks only for the undecided cases
and their reference, until decided or a bound; resumable; what it says and stores."""
from __future__ import annotations

import io
import random

import pytest
from rich.console import Console
from runkit import Quiet, one_study

from virtbench.measure.benchmarks.base import Benchmark, Metric
from virtbench.core.outcome import TrialOutcome
from virtbench.execution.run.runner import Prepared, Runner
from virtbench.foundations.store import Store
from virtbench.execution.run.adaptive import UNBOUNDED, undecided_function

REF = "ref"


def adaptive_study(min_trials: int = 3, max_trials: int = 8, **overrides):
    """trials = "auto" against REF: min_trials blocks first."""
    return one_study(adaptive=True, baseline=REF, trials=min_trials, min_trials=min_trials,
                     max_trials=max_trials, **overrides)


class Values(Benchmark):
    """Per environment, a value drawn around `level[env]` with `cv` noise (seeded)."""
    name, family = "values", "test"
    metrics = (Metric("seconds", "s", False),)

    def __init__(self, level, cv=0.01, seed=0, fail=()):
        self.level, self.cv, self.rng, self.fail = level, cv, random.Random(seed), set(fail)
        self.calls: list[str] = []

    def run_trial(self, env, params):
        self.calls.append(env.label)
        if (env.label, len(self.calls)) in self.fail:
            return TrialOutcome(error="exit status 1: broken", exit=1)
        v = self.level[env.label] * (1 + self.cv * self.rng.gauss(0, 1))
        return TrialOutcome(values={"seconds": v}, exit=0, wall_s=0.01)


class Script:
    """An undecided function that answers from a list, one answer per call, and records."""

    def __init__(self, answers):
        self.answers, self.calls = list(answers), 0

    def __call__(self, store, run_id):
        self.calls += 1
        return self.answers.pop(0) if self.answers else {}


def _run(tmp_path, benches, envs=(REF, "a", "b"), undecided=None, clock=None, **study):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    out = io.StringIO()
    prepared = Prepared(adaptive_study(**study), {e: Quiet(e) for e in envs},
                        {label: (b, {}) for label, b in benches.items()}, REF)
    runner = Runner(store, console=Console(file=out, width=400), show_progress=False,
                    **({"clock": clock} if clock is not None else {}))
    if undecided is not None:
        import virtbench.execution.run.adaptive as adaptive
        original = adaptive.AdaptiveLoop.__init__

        def init(self, *a, **kw):
            kw["undecided"] = undecided
            original(self, *a, **kw)
        adaptive.AdaptiveLoop.__init__ = init
        try:
            outcome = runner.start(prepared)
        finally:
            adaptive.AdaptiveLoop.__init__ = original
    else:
        outcome = runner.start(prepared)
    return store, outcome, out.getvalue()


def _blocks(store, run_id):
    by_block: dict[int, set] = {}
    for t in store.trials(run_id):
        by_block.setdefault(t["trial"], set()).add((t["environment"], t["benchmark"]))
    return by_block


def test_extra_blocks_hold_only_the_undecided_cases_and_their_reference(tmp_path):
    script = Script([{("a", "x"): ["seconds: undecided after 3 blocks"]},
                     {("a", "x"): ["seconds: still"], ("b", "y"): ["seconds: wobbly"]},
                     {}])
    benches = {"x": Values({REF: 1, "a": 1, "b": 1}), "y": Values({REF: 1, "a": 1, "b": 1})}
    store, outcome, text = _run(tmp_path, benches, undecided=script)
    assert outcome.status == "complete"
    blocks = _blocks(store, outcome.run_id)
    full = {(e, c) for e in (REF, "a", "b") for c in ("x", "y")}
    assert [blocks[t] == full for t in range(3)] == [True] * 3      # the plan's minimum
    assert blocks[3] == {("a", "x"), (REF, "x")}
    assert blocks[4] == {("a", "x"), (REF, "x"), ("b", "y"), (REF, "y")}
    assert max(blocks) == 4 and script.calls == 3
    detail = store.get_run(outcome.run_id)["detail"]["adaptive"]
    assert detail["stopped"] == "all decided" and detail["pending"] is None
    assert detail["blocks"] == {REF: {"x": 5, "y": 4}, "a": {"x": 5, "y": 3}, "b": {"x": 3, "y": 4}}
    assert "block 4: still undecided: a · x (seconds: undecided after 3 blocks)" in text
    assert "block 5: still undecided: a · x (seconds: still); b · y (seconds: wobbly)" in text
    assert "adaptive trials stopped: all decided" in text
    assert not [w for w in store.warnings(outcome.run_id) if w["kind"] == "undecided"]


def test_the_order_inside_an_extra_block_is_shuffled_with_the_seed(tmp_path):
    answers = [{("a", c): ["w"] for c in "xyzw"}] * 6
    benches = {c: Values({REF: 1, "a": 1}) for c in "xyzw"}
    store, outcome, _ = _run(tmp_path, benches, envs=(REF, "a"), undecided=Script(answers))
    orders = {}
    for t in store.trials(outcome.run_id):
        if t["trial"] >= 3:
            orders.setdefault(t["trial"], []).append((t["environment"], t["benchmark"]))
    assert len(orders) == 5 and all(len(o) == 8 for o in orders.values())
    assert len({tuple(o) for o in orders.values()}) > 1          # not one fixed order


def test_max_trials_bounds_each_case_and_says_what_stayed_undecided(tmp_path):
    forever = Script([{("a", "x"): ["seconds: never decides"],
                       (REF, "x"): ["the reference of a's seconds"]}] * 100)
    store, outcome, text = _run(tmp_path, {"x": Values({REF: 1, "a": 1})}, envs=(REF, "a"),
                                undecided=forever, max_trials=6)
    blocks = _blocks(store, outcome.run_id)
    assert max(blocks) == 5                                       # 6 blocks, then stop
    detail = store.get_run(outcome.run_id)["detail"]["adaptive"]
    assert detail["stopped"] == "max_trials"
    assert detail["undecided"] == {"a · x": ["seconds: never decides"]}
    warn = [w for w in store.warnings(outcome.run_id) if w["kind"] == "undecided"]
    assert warn and "adaptive trials stopped (max_trials)" in warn[0]["message"]
    assert "a · x" in warn[0]["message"] and f"{REF} · x" not in warn[0]["message"]


def test_failed_trials_are_replaced_up_to_twice_max_trials(tmp_path):
    bench = Values({REF: 1, "a": 1}, fail={("a", n) for n in range(1, 200)})
    bench.fail = {("a", n) for n in range(1, 200)}          # every trial of a fails
    forever = Script([{("a", "x"): ["seconds: 0 of at least 3 blocks"]}] * 100)
    store, outcome, _ = _run(tmp_path, {"x": bench}, envs=(REF, "a"), undecided=forever,
                             max_trials=4)
    counts = store.get_run(outcome.run_id)["detail"]["adaptive"]["blocks"]
    assert counts["a"]["x"] == 8                             # 2 x max_trials in all


def test_the_budget_stops_before_a_block_that_would_end_past_it(tmp_path):
    now = [0.0]

    class OneSecond(Values):            # every trial takes one second of the loop's clock
        def run_trial(self, env, params):
            now[0] += 1.0
            return super().run_trial(env, params)
    forever = Script([{("a", "x"): ["w"]}] * 100)
    store, outcome, text = _run(tmp_path, {"x": OneSecond({REF: 1, "a": 1})}, envs=(REF, "a"),
                                undecided=forever, clock=lambda: now[0], budget_s=20.0,
                                max_trials=50)
    detail = store.get_run(outcome.run_id)["detail"]["adaptive"]
    assert detail["stopped"] == "budget"
    # 3 blocks of the plan (6 s), then 2-second blocks while they end by 20 s: 7 of them
    assert detail["spent_s"] == 20.0
    assert max(_blocks(store, outcome.run_id)) == 9
    assert "adaptive trials stopped: budget after 20 s" in text
    warn = [w for w in store.warnings(outcome.run_id) if w["kind"] == "undecided"]
    assert "adaptive trials stopped (budget) after 20 s with 1 case(s) still undecided: a · x" \
        == warn[0]["message"]


def test_a_resumed_run_finishes_its_pending_block_first(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")

    class Stop(Values):
        def run_trial(self, env, params):
            if len(self.calls) == 6 + 1:        # the plan's 6 trials, then one of block 4
                self.calls.append("stop")
                raise KeyboardInterrupt
            return super().run_trial(env, params)
    prepared = Prepared(adaptive_study(), {e: Quiet(e) for e in (REF, "a")},
                        {"x": (Stop({REF: 1, "a": 1}), {})}, REF)
    import virtbench.execution.run.adaptive as adaptive
    original = adaptive.AdaptiveLoop.__init__
    answers = Script([{("a", "x"): ["w"]}, {}])

    def init(self, *a, **kw):
        kw["undecided"] = answers
        original(self, *a, **kw)
    adaptive.AdaptiveLoop.__init__ = init
    try:
        runner = Runner(store, console=Console(file=io.StringIO()), show_progress=False)
        first = runner.start(prepared)
        assert first.status == "interrupted"
        pending = store.get_run(first.run_id)["detail"]["adaptive"]["pending"]
        assert pending["block"] == 3 and sorted(map(tuple, pending["slots"])) == [("a", "x"), (REF, "x")]
        again = Prepared(adaptive_study(), {e: Quiet(e) for e in (REF, "a")},
                         {"x": (Values({REF: 1, "a": 1}), {})}, REF)
        calls_before = answers.calls
        runner2 = Runner(store, console=Console(file=io.StringIO()), show_progress=False)
        assert runner2._execute(first.run_id, again).status == "complete"
    finally:
        adaptive.AdaptiveLoop.__init__ = original
    blocks = _blocks(store, first.run_id)
    assert blocks[3] == {("a", "x"), (REF, "x")}          # finished, not abandoned
    assert max(blocks) == 3 and answers.calls == calls_before + 1
    slots = [(t["environment"], t["benchmark"], t["trial"]) for t in store.trials(first.run_id)]
    assert len(slots) == len(set(slots))


def test_the_real_rule_decides_an_a_a_twin_and_stops(tmp_path):
    """No scripted answers: the stored blocks decided by the analysis's sequential rule."""
    bench = Values({REF: 1.0, "a": 1.0}, cv=0.003, seed=4)
    store, outcome, text = _run(tmp_path, {"x": bench}, envs=(REF, "a"), min_trials=6,
                                max_trials=60)
    detail = store.get_run(outcome.run_id)["detail"]["adaptive"]
    assert detail["stopped"] == "all decided"
    n = detail["blocks"]["a"]["x"]
    assert 6 <= n < 60
    assert undecided_function(6)(store, outcome.run_id) == {}


def test_undecided_leaves_out_disturbed_trials_and_says_why(tmp_path):
    bench = Values({REF: 1.0, "a": 1.0}, cv=0.003, seed=4)
    store, outcome, _ = _run(tmp_path, {"x": bench}, envs=(REF, "a"), undecided=Script([]),
                             min_trials=6)
    # mark one of a's trials disturbed: the row has 5 usable blocks of at least 6
    import sqlalchemy as sa
    from virtbench.foundations.store.schema import trials
    with store.engine.begin() as c:
        c.execute(trials.update().where(trials.c.run_id == outcome.run_id,
                                        trials.c.environment == "a", trials.c.trial == 2)
                  .values(detail={"disturbed": {"reason": "test"}}))
    assert undecided_function(6)(store, outcome.run_id) == {
        ("a", "x"): ["seconds vs ref: 5 of at least 6 blocks"],
        ("ref", "x"): ["the reference of a's seconds"]}


def test_the_analysis_is_asked_with_the_study_s_own_bounds(tmp_path, monkeypatch):
    import virtbench.results.analysis as analysis
    seen = []

    def fake(store, run_id, **bounds):
        seen.append(bounds)
        return {}
    monkeypatch.setattr(analysis, "undecided_cases", fake)
    _run(tmp_path, {"x": Values({REF: 1, "a": 1})}, envs=(REF, "a"), min_trials=4,
         max_trials=9, resolution_pct=3.0)
    # max_trials is the loop's to apply (from the stored trials): the analysis is asked
    # without a bound, so that a case a bound stopped is still answered with why
    assert seen and set(map(tuple, (b.items() for b in seen))) == {
        (("min_blocks", 4), ("max_blocks", UNBOUNDED), ("resolve_pct", 3.0))}


def test_a_case_listed_only_as_another_row_s_reference_is_not_itself_undecided():
    from virtbench.execution.run.adaptive import own_reasons
    assert own_reasons({("a", "x"): ["seconds vs ref: 5 of at least 6 blocks"],
                        ("ref", "x"): ["the reference of a's seconds"],
                        ("b", "x"): ["mb_s vs ref: wide", "the reference of c's mb_s"]}) == {
        ("a", "x"): ["seconds vs ref: 5 of at least 6 blocks"], ("b", "x"): ["mb_s vs ref: wide"]}


# -- the stopping rule with the real analysis (issue 30): stop when every verdict is decided


def _verdicts(store, run_id):
    from virtbench.results.analysis import analyze_run
    report = analyze_run(store, run_id)
    return report, {(r.environment, r.benchmark): r.vs_baseline.verdict
                    for r in report.results if r.vs_baseline}


def test_an_a_a_twin_all_pass_early_stops_at_the_first_block_all_are_decided(tmp_path):
    benches = {c: Values({REF: 1.0, "a": 1.0}, cv=0.002, seed=i) for i, c in enumerate("xyz")}
    store, outcome, text = _run(tmp_path, benches, envs=(REF, "a"), min_trials=6,
                                max_trials=60)
    detail = store.get_run(outcome.run_id)["detail"]["adaptive"]
    assert detail["stopped"] == "all decided"
    n = detail["blocks"]["a"]["x"]
    assert detail["blocks"]["a"] == {"x": n, "y": n, "z": n} and 6 <= n < 10
    # the block before still had a case undecided (or was the plan's); this one had none
    assert n == 6 or f"block {n}: still undecided" in text
    assert f"block {n + 1}:" not in text
    assert detail["undecided"] == {} and detail["unresolved"] == {}
    report, verdicts = _verdicts(store, outcome.run_id)
    assert set(verdicts.values()) == {"pass"}
    assert report.run.adaptive.undecided == {}
    assert not [w for w in report.warnings if w.kind == "undecided"]


def test_one_undecided_case_runs_on_and_the_decided_ones_stop(tmp_path):
    benches = {"x": Values({REF: 1.0, "a": 1.0}, cv=0.002, seed=1),
               "noisy": Values({REF: 1.0, "a": 1.0}, cv=0.15, seed=2)}
    store, outcome, text = _run(tmp_path, benches, envs=(REF, "a"), min_trials=6,
                                max_trials=10)
    detail = store.get_run(outcome.run_id)["detail"]["adaptive"]
    assert detail["blocks"]["a"]["x"] == 6
    assert detail["blocks"]["a"]["noisy"] > 6
    report, verdicts = _verdicts(store, outcome.run_id)
    assert verdicts[("a", "x")] == "pass"
    # whatever remains undecided is exactly what the verdicts leave inconclusive
    open_ = {f"a · {c}" for (e, c), v in verdicts.items() if v == "inconclusive"}
    assert set(detail["undecided"]) == set(report.run.adaptive.undecided) == open_
    assert (detail["stopped"] == "max_trials") == bool(open_)


def test_a_resolution_asked_runs_a_pass_on_until_it_is_reached(tmp_path):
    benches = {"x": Values({REF: 1.0, "a": 1.0}, cv=0.002, seed=1)}
    store, outcome, _ = _run(tmp_path, benches, envs=(REF, "a"), min_trials=6,
                             max_trials=60, resolution_pct=0.5)
    detail = store.get_run(outcome.run_id)["detail"]["adaptive"]
    # the pass at 6 blocks does not yet rule out 0.5 %: it runs on until it does
    assert detail["stopped"] == "all decided" and 6 < detail["blocks"]["a"]["x"] < 60
    assert detail["resolution_pct"] == 0.5


def test_a_resolution_out_of_reach_runs_to_the_max_and_is_not_called_undecided(tmp_path):
    benches = {"x": Values({REF: 1.0, "a": 1.0}, cv=0.01, seed=3)}
    store, outcome, text = _run(tmp_path, benches, envs=(REF, "a"), min_trials=6,
                                max_trials=12, resolution_pct=0.2)
    detail = store.get_run(outcome.run_id)["detail"]["adaptive"]
    assert detail["stopped"] == "max_trials" and detail["blocks"]["a"]["x"] == 12
    report, verdicts = _verdicts(store, outcome.run_id)
    assert verdicts[("a", "x")] == "pass"
    assert detail["undecided"] == {} and report.run.adaptive.undecided == {}
    assert list(detail["unresolved"]) == ["a · x"]
    assert not [w for w in store.warnings(outcome.run_id) if w["kind"] == "undecided"]
    assert "a change of 0.2 % not ruled out: a · x" in text


def test_a_stored_record_that_calls_a_decided_case_undecided_is_read_by_its_verdicts(tmp_path):
    """Runs stored before the change listed every case at max_trials as undecided."""
    benches = {"x": Values({REF: 1.0, "a": 1.0}, cv=0.002, seed=1)}
    store, outcome, _ = _run(tmp_path, benches, envs=(REF, "a"), min_trials=6)
    detail = store.get_run(outcome.run_id)["detail"]["adaptive"]
    store.update_run_detail(outcome.run_id, adaptive={
        **detail, "stopped": "max_trials", "undecided": {"a · x": ["60 blocks"]}})
    store.add_warning(outcome.run_id, "undecided", "adaptive trials stopped (max_trials) "
                      "after 445 s with 1 case(s) still undecided: a · x")
    report, verdicts = _verdicts(store, outcome.run_id)
    assert verdicts[("a", "x")] == "pass"
    assert report.run.adaptive.undecided == {}
    assert not [w for w in report.warnings if w.kind == "undecided"]
