"""Adaptive trials (`trials = "auto"`): after the plan's min_trials blocks, more blocks for the
cases whose verdicts are still undecided, until every verdict is decided or a bound is hit.

The rule, as a specification (stats/sequential.py states the per-row rule and
docs/decisions.md the same in words): after every block, a case gets another block exactly
when one of its rows needs one (fewer than min_trials usable blocks; a verdict
"inconclusive" at the study's threshold, after the family's correction; or, only when the
study asks a `resolution` R, a "pass" whose sequence does not yet rule out a change of R %)
and the case has fewer than max_trials usable blocks and fewer than 2 x max_trials blocks
in all. The loop ends at the first block after which no case gets one: "all decided" when
every verdict is decided (pass, fail, differs) and every asked resolution reached,
"max_trials" when a case that needs a block is at its bound, "budget" or "no reference".
Without a resolution an A/A twin whose verdicts are all "pass" after min_trials blocks stops
there.

After every block the loop asks which (environment, benchmark) cases still need a block
(analysis.undecided_cases with the study's bounds: the sequential decisions of docs/decisions.md, whose confidence
sequences stay valid however often they are looked at; disturbed and failed trials leave
holes, so their cases come back for another block). The next block is a new randomised
block, numbered after the last, over those cases and their reference (a case is paired
with its reference inside a block), shuffled with the run's seed and the block's number.
Before it runs, the block is written into the run's detail ("adaptive": "pending"), so a
resumed run finishes that very block before it asks again.

"budget": the next block would end past the wall-clock budget (the time of the run's
sessions, the plan's blocks included; the plan's min_trials blocks always run). Why it
stopped, the blocks each case got, the cases a bound left undecided (a verdict
"inconclusive": never a decided one) and those left unresolved (decided "pass", a change
of R % not ruled out) go into the run's detail ("adaptive"), and an `undecided` warning
names the cases a bound left undecided.
"""
from __future__ import annotations

import random
from collections import Counter
from typing import TYPE_CHECKING, Callable, Mapping, Protocol, runtime_checkable

from ...foundations.store import Store
from ...study.design import PlannedTrial

if TYPE_CHECKING:
    from .prepare import Prepared

ALL_DECIDED, MAX_TRIALS, BUDGET, NO_REFERENCE = "all decided", "max_trials", "budget", \
    "no reference"

# {(environment, benchmark): [why, one line per undecided row]}, from the stored blocks.
Undecided = Callable[[Store, str], dict[tuple[str, str], list[str]]]


def own_reasons(undecided: dict[tuple[str, str], list[str]], unresolved: bool = False
                ) -> dict[tuple[str, str], list[str]]:
    """The cases undecided for a row of their own, with only those rows' reasons (a case
    listed only as another row's reference left out: analysis.undecided_cases lists it, so
    that it runs in the same block as the rows that need it). Rows decided "pass" that run on
    for the study's resolution are not undecided: `unresolved=True` gives those instead."""
    from ...results.analysis.undecided import REFERENCE_OF, UNRESOLVED   # lazily: numpy/scipy

    def keep(why: str) -> bool:
        return not why.startswith(REFERENCE_OF) and why.startswith(UNRESOLVED) == unresolved
    out = {case: [w for w in whys if keep(w)] for case, whys in undecided.items()}
    return {case: whys for case, whys in out.items() if whys}


# the max_blocks the analysis is asked with: the loop applies max_trials itself (from the
# stored trials), so that the cases a bound stopped are still answered, with why
UNBOUNDED = 10**9


def undecided_function(min_blocks: int, resolve_pct: float | None = None) -> Undecided:
    """analysis.undecided_cases with the run's minimum and resolution (the study's
    min_trials, resolution); the maximum is the loop's to apply."""
    from ...results.analysis import undecided_cases

    def ask(store: Store, run_id: str) -> dict[tuple[str, str], list[str]]:
        return undecided_cases(store, run_id, min_blocks=min_blocks, max_blocks=UNBOUNDED,
                               resolve_pct=resolve_pct)
    return ask


@runtime_checkable
class Blocks(Protocol):
    """What the adaptive loop is handed: the run it adds blocks to, as much of it as the loop
    uses. The runner's session (execution/run/session.py) is one; the loop imports nothing
    of the runner, its session or the executor."""
    run_id: str
    store: Store
    prepared: Prepared

    @property
    def dead(self) -> Mapping[str, str]:
        """The run's environments whose trials fail now, and why."""

    @property
    def slots_run(self) -> int:
        """The slots this session ran so far."""

    def spent_s(self) -> float:
        """This session's time so far."""

    def run_slots(self, slots: list[PlannedTrial], extra: bool = False) -> None:
        """Run these slots, each stored (`extra`: slots the plan did not count)."""

    def describe(self, text: str) -> None:
        """The progress line's description."""

    def say(self, text: str) -> None:
        """One line to the console, as it is."""


class AdaptiveLoop:
    def __init__(self, session: Blocks, undecided: Undecided | None = None):
        """The blocks after the plan's of the run `session` runs, run through its
        `run_slots`; `undecided`: the question asked after each block (by default the
        analysis's, with the study's minimum and resolution)."""
        self.session = session
        self.run_id, self.prepared, self.store = session.run_id, session.prepared, session.store
        self.study = session.prepared.study
        self.undecided = undecided or undecided_function(self.study.min_trials,
                                                         self.study.resolution_pct)
        self.spent_before = 0.0              # the run's earlier sessions' time (run() reads it)
        self._slot_s: float | None = None    # the last block's time per slot

    # -- the loop ------------------------------------------------------------------------
    def run(self) -> str:
        record = dict((self.store.get_run(self.run_id).get("detail") or {}).get("adaptive") or {})
        self.spent_before = float(record.get("spent_s", 0.0))
        pending = record.get("pending")
        if pending:                        # a block an interrupted session did not finish
            self._run_block(pending["block"], [tuple(s) for s in pending["slots"]])
        while True:
            undecided = self.undecided(self.store, self.run_id)
            counts, usable = self._blocks()
            cases, why_stop = self._runnable(undecided, counts, usable)
            if not cases:
                return self._stop(why_stop, undecided, counts)
            units = sorted(set(cases) | {(self.prepared.baseline, c) for _, c in cases})
            if self._over_budget(len(units)):
                return self._stop(BUDGET, undecided, counts)
            block = self._next_block()
            self._say(block, cases, undecided)
            self._run_block(block, units)

    def _run_block(self, block: int, units: list[tuple[str, str]]) -> None:
        done = self.store.done_slots(self.run_id)
        order = list(units)
        random.Random(f"{self.study.seed}:{block}").shuffle(order)
        seq = self._next_seq()
        slots = []
        for env, case in order:
            if (env, case, block) in done:
                continue
            slots.append(PlannedTrial(seq, block, env, case))
            seq += 1
        self._save(pending={"block": block, "slots": [list(u) for u in units]})
        t0 = self.session.spent_s()
        self.session.run_slots(slots, extra=True)
        if slots:
            self._slot_s = (self.session.spent_s() - t0) / len(slots)
        self._save(pending=None)

    # -- what to run ---------------------------------------------------------------------
    def _blocks(self) -> tuple[Counter, Counter]:
        """Measured trials per (environment, case): all of them, and the usable ones (ok
        and not disturbed)."""
        counts, usable = Counter(), Counter()
        for t in self.store.trials(self.run_id):
            key = (t["environment"], t["benchmark"])
            counts[key] += 1
            if t["status"] == "ok" and not (t.get("detail") or {}).get("disturbed"):
                usable[key] += 1
        return counts, usable

    def _runnable(self, undecided, counts, usable) -> tuple[list, str]:
        """The undecided cases that may have another block, and why none may if none."""
        ref, most = self.prepared.baseline, self.study.max_trials
        dead = self.session.dead
        cases, capped, no_ref = [], False, False
        for env, case in sorted(undecided):
            if env not in self.prepared.envs or case not in self.prepared.cases or env == ref:
                continue
            if env in dead:
                continue
            if ref is None or ref in dead or (ref, case) in self.prepared.skip:
                no_ref = True
                continue
            if usable[(env, case)] >= most or counts[(env, case)] >= 2 * most:
                capped = True
                continue
            cases.append((env, case))
        if cases:
            return cases, ""
        return [], MAX_TRIALS if capped else NO_REFERENCE if no_ref else ALL_DECIDED

    def _next_block(self) -> int:
        trials = [t["trial"] for t in self.store.trials(self.run_id)]
        return max([self.study.trials - 1, *trials]) + 1

    def _next_seq(self) -> int:
        seqs = [t["seq"] for t in self.store.trials(self.run_id)]
        return max([-1, *seqs]) + 1

    # -- bounds --------------------------------------------------------------------------
    def spent_s(self) -> float:
        return self.spent_before + self.session.spent_s()

    def _over_budget(self, n_slots: int) -> bool:
        """Would a block of n_slots end past the budget? Its time is predicted from the last
        block's time per slot, else from this session's so far."""
        budget = self.study.budget_s
        if not budget:
            return False
        per = self._slot_s
        if per is None:
            done = self.session.slots_run
            per = self.session.spent_s() / done if done else 0.0
        return self.spent_s() + per * n_slots > budget

    # -- what it says --------------------------------------------------------------------
    def _say(self, block: int, cases, undecided) -> None:
        first = cases[0]
        why = undecided[first][0] if undecided.get(first) else ""
        short = why if len(why) <= 90 else why[:87] + "..."
        self.session.describe(f"block {block + 1}: {len(cases)} case(s) undecided, "
                             f"e.g. {first[0]} · {first[1]}: {short}")
        lines = "; ".join(f"{e} · {c} ({', '.join(undecided.get((e, c), []))})"
                          for e, c in cases)
        self.session.say(f"block {block + 1}: still undecided: {lines}")

    def _save(self, **parts) -> None:
        detail = (self.store.get_run(self.run_id).get("detail") or {}).get("adaptive") or {}
        detail = {**detail, **parts, "spent_s": round(self.spent_s(), 3),
                  "min_trials": self.study.min_trials, "max_trials": self.study.max_trials,
                  "budget_s": self.study.budget_s,
                  "resolution_pct": self.study.resolution_pct}
        self.store.update_run_detail(self.run_id, adaptive=detail)

    def _stop(self, reason: str, undecided, counts) -> str:
        blocks: dict[str, dict[str, int]] = {}
        for (env, case), n in sorted(counts.items()):
            blocks.setdefault(env, {})[case] = n
        def listed(unresolved: bool) -> dict[str, list[str]]:
            return {f"{e} · {c}": whys for (e, c), whys
                    in sorted(own_reasons(undecided, unresolved).items())
                    if e in self.prepared.envs}
        left, unresolved = listed(False), listed(True)
        self._save(stopped=reason, blocks=blocks, undecided=left, unresolved=unresolved,
                   pending=None)
        spent = self.spent_s()
        self.session.say(
            f"adaptive trials stopped: {reason} after {spent:.0f} s"
            + (f"; still undecided: {', '.join(left)}" if left and reason != ALL_DECIDED
               else "")
            + (f"; decided, a change of {self.study.resolution_pct:g} % not ruled out: "
               f"{', '.join(unresolved)}" if unresolved and reason != ALL_DECIDED else ""))
        if left and reason != ALL_DECIDED:
            self.store.add_warning(
                self.run_id, "undecided",
                f"adaptive trials stopped ({reason}) after {spent:.0f} s with {len(left)} "
                f"case(s) still undecided: {', '.join(left)}")
        return reason
