"""The runner's session: one object per start or resume, made by the runner and handed on;
a started runner holds nothing of it afterwards; the adaptive loop and duet mode run over
nothing but the narrow interfaces they declare (fakes of those, no runner, here)."""
from __future__ import annotations

import io

from rich.console import Console
from runkit import Quiet, one_study

from virtbench import __version__
from virtbench.core.outcome import TrialOutcome
from virtbench.execution.run.adaptive import BUDGET, ALL_DECIDED, AdaptiveLoop, Blocks
from virtbench.execution.run.duet import Pairs, run_duet
from virtbench.execution.run.runner import Prepared, Runner
from virtbench.execution.run.session import RunSession
from virtbench.foundations.store import Store
from virtbench.measure.benchmarks.base import Benchmark, Metric
from virtbench.study.design import PlannedTrial

REF = "ref"


class Ones(Benchmark):
    """Every trial measures 1 s; those numbered in `fail` (counting from 1) fail."""
    name, family = "ones", "test"
    metrics = (Metric("seconds", "s", False),)

    def __init__(self, fail=()):
        self.calls, self.fail = 0, set(fail)

    def run_trial(self, env, params):
        self.calls += 1
        if self.calls in self.fail:
            return TrialOutcome(error="exit status 1: broken", exit=1)
        return TrialOutcome(values={"seconds": 1.0}, exit=0, wall_s=0.01)


class Watching(Runner):
    """A runner whose per-slot hook records what it is handed."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen: list[tuple[RunSession, PlannedTrial, bool]] = []

    def slot_ran(self, session, slot, ok):
        self.seen.append((session, slot, ok))


def _prepared(study=None, bench=None, envs=(REF, "a")):
    study = study or one_study(trials=2, cases=[("x", "ones")])
    return Prepared(study, {e: Quiet(e) for e in envs}, {"x": (bench or Ones(), {})}, REF)


def _store(tmp_path) -> Store:
    return Store(f"sqlite:///{tmp_path / 's.db'}")


def test_a_started_runner_holds_nothing_of_its_run(tmp_path):
    runner = Runner(_store(tmp_path), console=Console(file=io.StringIO()), show_progress=False)
    before = dict(vars(runner))
    assert runner.start(_prepared()).status == "complete"
    after = vars(runner)
    assert after.keys() == before.keys()
    assert all(after[k] is before[k] for k in before)


def test_one_session_per_start_counts_its_own_slots_and_is_handed_on(tmp_path):
    runner = Watching(_store(tmp_path), console=Console(file=io.StringIO()), show_progress=False)
    first = runner.start(_prepared(bench=Ones(fail={3})))
    sessions = {id(s) for s, _, _ in runner.seen}
    assert len(sessions) == 1 and len(runner.seen) == 4 == first.done
    session = runner.seen[0][0]
    assert session.tally is first and session.run_id == first.run_id
    assert [ok for _, _, ok in runner.seen].count(False) == 1 == first.failed
    # what the adaptive loop and duet mode are handed, the session offers
    assert isinstance(session, Blocks) and isinstance(session, Pairs)
    runner.seen.clear()
    second = runner.start(_prepared())
    assert {id(s) for s, _, _ in runner.seen} != sessions
    assert second.done == 4 and second.failed == 0 and second.run_id != first.run_id


class Interrupted(Ones):
    """Ctrl-C at its trial `at` (counting from 1)."""

    def __init__(self, at):
        super().__init__()
        self.at = at

    def run_trial(self, env, params):
        if self.calls + 1 == self.at:
            raise KeyboardInterrupt
        return super().run_trial(env, params)


def test_a_resumed_run_is_a_new_session_of_the_missing_slots(tmp_path):
    runner = Watching(_store(tmp_path), console=Console(file=io.StringIO()), show_progress=False)
    first = runner.start(_prepared(bench=Interrupted(at=3)))
    assert first.status == "interrupted" and first.done == 2
    stored = [(s.environment, s.trial) for _, s, _ in runner.seen]
    runner.seen.clear()
    again = runner._execute(first.run_id, _prepared())
    assert again.status == "complete" and again.skipped_before == 2 and again.done == 2
    resumed = [(s.environment, s.trial) for _, s, _ in runner.seen]
    assert sorted(stored + resumed) == sorted((e, t) for e in (REF, "a") for t in (0, 1))
    assert runner.seen[0][0].tally is again and runner.seen[0][0].run_id == first.run_id


# -- the adaptive loop over a fake of what it is handed ----------------------------------


class FakeBlocks:
    """adaptive.Blocks with no runner: run_slots records the slots (stores nothing), the
    time spent is what the test says."""

    def __init__(self, store, run_id, prepared, spent=0.0):
        self.store, self.run_id, self.prepared = store, run_id, prepared
        self.dead, self.slots_run, self.spent = {}, 0, spent
        self.ran: list[tuple[list[PlannedTrial], bool]] = []
        self.lines: list[str] = []

    def spent_s(self):
        return self.spent

    def run_slots(self, slots, extra=False):
        self.ran.append((list(slots), extra))
        self.slots_run += len(slots)

    def describe(self, text):
        self.lines.append(f"describe: {text}")

    def say(self, text):
        self.lines.append(text)


def _fake_blocks(tmp_path, **study):
    store = _store(tmp_path)
    s = one_study(adaptive=True, baseline=REF, trials=3, min_trials=3, max_trials=8,
                  cases=[("x", "ones")], **study)
    run_id = store.create_run(s.to_dict(), seed=1, quick=True, version=__version__, host="h")
    return FakeBlocks(store, run_id, _prepared(s))


def test_the_adaptive_loop_runs_a_block_through_what_it_is_handed(tmp_path):
    blocks = _fake_blocks(tmp_path)
    assert isinstance(blocks, Blocks)
    answers = [{("a", "x"): ["seconds: undecided"]}, {}]
    reason = AdaptiveLoop(blocks, undecided=lambda store, run_id: answers.pop(0)).run()
    assert reason == ALL_DECIDED and answers == []
    [(slots, extra)] = blocks.ran
    assert extra and sorted((s.environment, s.benchmark, s.trial) for s in slots) == [
        ("a", "x", 3), (REF, "x", 3)]
    assert "block 4: still undecided: a · x (seconds: undecided)" in blocks.lines
    assert blocks.lines[-1].startswith("adaptive trials stopped: all decided after 0 s")


def test_the_adaptive_budget_is_the_time_the_session_says_it_spent(tmp_path):
    blocks = _fake_blocks(tmp_path, budget_s=10.0)
    blocks.spent = 11.0
    reason = AdaptiveLoop(blocks, undecided=lambda store, run_id: {("a", "x"): ["w"]}).run()
    assert reason == BUDGET and blocks.ran == []
    detail = blocks.store.get_run(blocks.run_id)["detail"]["adaptive"]
    assert detail["stopped"] == BUDGET and detail["spent_s"] == 11.0


# -- duet mode over a fake of what it is handed ------------------------------------------


class FakeReady:
    def __init__(self, slot, error=None):
        self.slot, self.error, self.bench, self.params = slot, error, Ones(), {}


class FakePairs:
    """duet.Pairs with no runner: the executor's steps and the keeper's pinning logged."""

    def __init__(self, prepared, fail_ready=()):
        self.prepared, self.log = prepared, []
        self.fail_ready = set(fail_ready)
        self.executor, self.keeper = self, self
        self.envs = {label: Quiet(label) for label in prepared.envs}

    def ready(self, slot, others=()):
        self.log.append(("ready", slot.environment, tuple(e.label for e in others)))
        return FakeReady(slot, "cannot start" if slot.environment in self.fail_ready else None)

    def measure(self, ready):
        self.log.append(("measure", ready.slot.environment))
        return TrialOutcome(values={"seconds": 1.0}, exit=0)

    def record(self, ready, result):
        self.log.append(("record", ready.slot.environment,
                         None if result is None else result.detail["duet"]["partner"]))
        return result is not None

    def pin_apart(self, envs, bench, params):
        self.log.append(("pin_apart", tuple(e.label for e in envs)))
        return [[0], [1]]

    def slot_ran(self, slot, ok):
        self.log.append(("ran", slot.environment, ok))

    def describe(self, text):
        pass


def test_duet_mode_runs_a_pair_through_what_it_is_handed():
    pairs_ = FakePairs(_prepared())
    assert isinstance(pairs_, Pairs)
    run_duet(pairs_, [PlannedTrial(0, 0, REF, "x"), PlannedTrial(1, 0, "a", "x")])
    log = pairs_.log
    assert log[:2] == [("ready", REF, ("a",)), ("ready", "a", (REF,))]
    assert log[2][0] == "pin_apart" and sorted(log[2][1]) == ["a", REF]
    assert sorted(log[3:5]) == [("measure", "a"), ("measure", REF)]
    assert log[5:] == [("record", REF, "a"), ("ran", REF, True),
                       ("record", "a", REF), ("ran", "a", True)]


def test_duet_mode_runs_the_other_alone_when_one_cannot_start():
    pairs_ = FakePairs(_prepared(), fail_ready={"a"})
    run_duet(pairs_, [PlannedTrial(0, 0, REF, "x"), PlannedTrial(1, 0, "a", "x")])
    assert pairs_.log[2:] == [("measure", REF), ("record", REF, None), ("ran", REF, True),
                              ("record", "a", None), ("ran", "a", False)]
