"""A tune run after its plan's blocks (docs/tune.md): the adaptive screening's further blocks
(`trials = "auto"`), then the recommended configuration against the base, in the same run.

The adaptive screening, as a specification: the screening looks at its effects after the
blocks study/tune.looks() lists (min_trials, doubling, max_trials last), each look at alpha
divided by their number. At a look where every knob's main effect on every metric is
decided (matters or no effect) it stops ("all decided"); otherwise it runs whole blocks (every
configuration and the base, shuffled with the run's seed and the block's number) up to the
next look, unless there is none ("max_trials") or those blocks would end past the study's
budget ("budget"). The look it runs to is written into the run's detail
(`tune_screening`) before its blocks run, so a resumed run finishes them first.

The confirmation, as a specification: once the screening's blocks are stored, the run is
analysed and its recommendation read (results/analysis/tune.py: the knobs that matter on
any metric, at their better level; after a refinement, execution/run/refine.py, its best).
No knob that matters: the base stays, nothing more runs, and the run's detail says so.
Otherwise the recommended configuration (the base with the recommended levels, named
`recommended`) becomes an environment of the run, made and checked like the plan's
(created, probed, resolved, given its cases' packages), and runs
`max(trials, TUNE_CONFIRM_BLOCKS)` blocks after the plan's, each block the base and the
recommended configuration on every case, in an order shuffled with the run's seed and the
block's number; an adaptive tune's (`trials = "auto"`, whose rows are decided by confidence
sequences) then runs one more block while the A/B is inconclusive on the metric the tune's
headline says it on (`tune.confirmed`), up to max_trials blocks. Its rows are compared with
the base on the blocks both ran (every comparison pairs inside blocks), decided like every
row of the run. The recommendation and its blocks are written into the run's detail
(`tune`) before they run, so a resumed run runs the very same configuration and the blocks
it is missing.
"""
from __future__ import annotations

import random
from typing import Callable

from ...core import defaults
from ...core.decisions import Decided, KnobEffect
from ...core.errors import VirtbenchError
from ...foundations.store import Store, jsonable
from ...measure import environments
from ...measure.environments import Environment
from ...study.design import PlannedTrial
from ...study.tune import BASE_NAME, RECOMMENDED_NAME
from .adaptive import Blocks
from .prepare import give_packages, skipped_cases

# the recommendation of the run stored in `store` as `run_id` (knob -> level; {}: keep the
# base), read after the plan's blocks
Recommend = Callable[[Store, str], dict[str, str]]
# the knobs still undecided, one line each ("pi · seconds: mem (>= 14 blocks would decide)")
Undecided = Callable[[Store, str], list[str]]
ALL_DECIDED, MAX_TRIALS, BUDGET = "all decided", "max_trials", "budget"


def tune_of(store: Store, run_id: str):
    """The run's tune as its report makes it (the analysis is loaded lazily: numpy, scipy,
    statsmodels); None for a run that is not a tune."""
    from ...results.analysis import analyze_run
    return analyze_run(store, run_id).tune


def recommendation(store: Store, run_id: str) -> dict[str, str]:
    """The run's recommendation: the better level of every knob that matters, those the
    base already has included."""
    tune = tune_of(store, run_id)
    return {} if tune is None else {**tune.kept, **tune.recommended}


def undecided_knobs(store: Store, run_id: str) -> list[str]:
    """The run's knobs still undecided on some metric."""
    tune = tune_of(store, run_id)
    if tune is None:
        return []
    return [f"{k.benchmark} · {k.metric}: {k.knob}"
            + (f" (>= {k.blocks_needed} blocks would decide)" if k.blocks_needed else "")
            for k in tune.knobs if k.decision == KnobEffect.UNDECIDED]


def ab_undecided(store: Store, run_id: str) -> bool:
    """Whether the A/B of the recommendation is still inconclusive (`tune.confirmed`)."""
    tune = tune_of(store, run_id)
    vs = tune.confirmed if tune is not None else None
    return vs is None or vs.verdict == Decided.INCONCLUSIVE


def make_environment(spec: str) -> Environment:
    """The recommended configuration's environment, probed and resolved like the plan's."""
    env = environments.create(spec)
    usability = type(env).probe()
    if not usability.usable:
        raise VirtbenchError(f"environment {spec}: not usable here: {usability.reason}")
    env.resolve()
    return env


def add_configuration(session: Blocks, env: Environment, spec: str) -> str:
    """Make `env` (a configuration the tune chose after its plan: the recommended one, a
    refinement's) an environment of the run, as the plan's are: its cases' packages, the
    cases it cannot run skipped, stored as planned; its label. Once per session."""
    prepared, label = session.prepared, env.label
    if label in prepared.envs:
        return label
    cases = prepared.cases
    skipped = skipped_cases({label: env}, cases)
    give_packages({label: env}, cases, {(e, c) for e, c, _ in skipped})
    prepared.envs[label] = env               # the keeper holds this very mapping
    prepared.skipped_cases.extend(skipped)
    options = {**env.values, **({"name": env.name} if env.name else {})}
    session.store.upsert_environment(session.run_id, label, kind=env.kind, spec=spec,
                                     options=jsonable(options), status="planned")
    return label


def run_pair_blocks(session: Blocks, blocks: range, pair: tuple[str, str], tag: str) -> None:
    """Blocks numbered `blocks` of the two environments `pair` on every case both can run;
    the slots already stored are not run again."""
    skip = session.prepared.skip
    units = [(env, case) for case in session.prepared.cases for env in pair
             if not any((e, case) in skip for e in pair)]
    for block in blocks:
        run_block(session, block, units, f"{tag}:{block}",
                  f"{tag}: {pair[1]} against {pair[0]}, block {block + 1}")


def run_block(session: Blocks, block: int, units: list[tuple[str, str]], key: str,
              shown: str) -> None:
    """One block of `units` ((environment, case) pairs) numbered `block`, in an order
    shuffled with the run's seed and `key`; the slots already stored are not run again,
    the others numbered after the run's last."""
    store, run_id = session.store, session.run_id
    done = store.done_slots(run_id)
    order = list(units)
    random.Random(f"{session.prepared.study.seed}:{key}").shuffle(order)
    todo = [(env, case) for env, case in order if (env, case, block) not in done]
    if not todo:
        return
    seq = max([-1, *(t["seq"] for t in store.trials(run_id))]) + 1
    slots = [PlannedTrial(seq + i, block, env, case) for i, (env, case) in enumerate(todo)]
    session.describe(shown)
    session.run_slots(slots, extra=True)


class ConfirmStage:
    def __init__(self, session: Blocks, recommend: Recommend | None = None,
                 make: Callable[[str], Environment] | None = None):
        """The confirmation of the tune run `session` runs (through its `run_slots`);
        `recommend` and `make`: how the recommendation is read and its environment made
        (tests give their own)."""
        self.session = session
        self.run_id, self.prepared, self.store = session.run_id, session.prepared, session.store
        self.study = session.prepared.study
        self.recommend = recommend or recommendation
        self.make = make or make_environment
        self.undecided_ab = ab_undecided

    def run(self) -> dict:
        """Run what the confirmation is missing; its record (the run detail's `tune`)."""
        record = dict((self.store.get_run(self.run_id).get("detail") or {}).get("tune") or {})
        if "recommended" not in record:
            refined = (self.store.get_run(self.run_id).get("detail") or {}).get("tune_refine")
            levels = (refined["best"] if refined and refined.get("stopped")
                      else self.recommend(self.store, self.run_id))
            record = self._plan(self.study.tune.changes(levels))
            self.store.update_run_detail(self.run_id, tune=record)
        if not record["recommended"]:
            self.session.say("tune: nothing to change (no knob matters, or the base has its "
                             "better level); the base stays, nothing to confirm")
            return record
        base = self.prepared.baseline or BASE_NAME
        if base in self.session.dead:
            return self._unconfirmed(record, f"the base ({base}) was lost")
        try:
            label = add_configuration(self.session, self.make(record["spec"]), record["spec"])
        except VirtbenchError as exc:
            return self._unconfirmed(record, str(exc))
        first, count = record["first_block"], record["blocks"]
        shown = ", ".join(f"{k}={v}" for k, v in record["recommended"].items())
        self.session.say(f"tune: recommended {shown}; confirming it against the base in "
                         f"{count} block(s)")
        run_pair_blocks(self.session, range(first, first + count), (base, label), "tune")
        if self.study.adaptive:
            self._until_decided(record, base, label)
        return record

    def _until_decided(self, record: dict, base: str, label: str) -> None:
        """An adaptive tune (its rows decided by confidence sequences, valid however often
        they are looked at): one more block of the A/B while its first metric is undecided,
        up to max_trials blocks."""
        while (record["blocks"] < self.study.max_trials and label not in self.session.dead
               and self.undecided_ab(self.store, self.run_id)):
            block = record["first_block"] + record["blocks"]
            record["blocks"] += 1
            self.store.update_run_detail(self.run_id, tune=record)
            run_pair_blocks(self.session, range(block, block + 1), (base, label), "tune")

    def _unconfirmed(self, record: dict, why: str) -> dict:
        """The A/B cannot run in this run: said, and warned (`tune_unconfirmed`)."""
        self.session.say(f"tune: the recommendation cannot be confirmed in this run: {why}")
        self.store.add_warning(self.run_id, "tune_unconfirmed",
                               f"the recommended configuration ({record['spec']}) was not "
                               f"confirmed against the base: {why}")
        return record

    # -- what it runs --------------------------------------------------------------------
    def _plan(self, levels: dict[str, str]) -> dict:
        if not levels:
            return {"recommended": {}}
        entry = self.study.tune
        trials = [t["trial"] for t in self.store.trials(self.run_id)]
        first = max([self.study.trials - 1, *trials]) + 1
        return {"recommended": levels, "spec": entry.spec(levels, RECOMMENDED_NAME),
                "first_block": first,
                "blocks": max(self.study.trials, defaults.TUNE_CONFIRM_BLOCKS)}



class ScreeningLoop:
    def __init__(self, session: Blocks, undecided: Undecided | None = None):
        """The adaptive screening's blocks of the tune run `session` runs (module
        docstring); `undecided`: the question asked at each look (tests give their own)."""
        self.session = session
        self.run_id, self.prepared, self.store = session.run_id, session.prepared, session.store
        self.study = session.prepared.study
        self.undecided = undecided or undecided_knobs
        self.labels = [label for label in self.prepared.envs]     # the base and the design's

    def run(self) -> str:
        """Run the screening's blocks to its stopping look; why it stopped."""
        from ...study.tune import looks
        schedule = looks(self.study.min_trials, self.study.max_trials)
        record = dict((self.store.get_run(self.run_id).get("detail") or {})
                      .get("tune_screening") or {})
        target = int(record.get("target", schedule[0]))
        while True:
            for block in range(target):
                self._run_block(block)
            left = self.undecided(self.store, self.run_id)
            later = [n for n in schedule if n > target]
            reason = (ALL_DECIDED if not left else MAX_TRIALS if not later
                      else BUDGET if self._over_budget(later[0] - target) else "")
            if reason:
                self._save(target=target, stopped=reason, undecided=left, looks=schedule)
                self.session.say(f"tune: screening stopped ({reason}) after {target} "
                                 "block(s)" + (f"; undecided: {'; '.join(left)}" if left
                                               else ""))
                return reason
            self.session.say(f"tune: after {target} block(s) undecided: {'; '.join(left)}; "
                             f"running to {later[0]}")
            target = later[0]
            self._save(target=target, looks=schedule)

    def _run_block(self, block: int) -> None:
        skip = self.prepared.skip
        units = [(env, case) for env in self.labels for case in self.prepared.cases
                 if (env, case) not in skip]
        run_block(self.session, block, units, str(block),
                  f"tune: screening block {block + 1}")

    def _over_budget(self, blocks: int) -> bool:
        """Would `blocks` more blocks end past the study's budget? (this session's time per
        slot so far predicts them)"""
        budget = self.study.budget_s
        done = self.session.slots_run
        if not budget or not done:
            return False
        per_slot = self.session.spent_s() / done
        per_block = len(self.labels) * len(self.prepared.cases)
        return self.session.spent_s() + per_slot * per_block * blocks > budget

    def _save(self, **parts) -> None:
        self.store.update_run_detail(self.run_id, tune_screening=parts)
