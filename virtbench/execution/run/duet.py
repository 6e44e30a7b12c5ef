"""Duet mode (`duet = true`, `--duet`): each block's pair, an environment and its reference
on the same case, measured at the same time on disjoint CPUs, so that what disturbs the host
during the pair disturbs both (Bulej, Horky, Tuma, Farquet & Prokopec, "Duet benchmarking:
improving measurement accuracy in the cloud", ICPE 2020 / Empirical Software Engineering
2020, who report comparisons 5 to 37 times tighter in clouds).

A study in duet mode has two environments, one of them the reference. The plan is the
ordinary randomised one; every slot whose partner (same case, same block, the other
environment) is also to be run is run together with it: both made ready (neither paused for
the other), both pinned at once onto disjoint CPUs (which gets which drawn per block with the
run's seed, so that a CPU that also serves virtbench and interrupts favours neither), then
both trials started together (a barrier) on two threads, and stored one after the other.
Each trial's detail says so ("duet": its partner, its CPUs, how much of the two trials'
time overlapped and how far apart they started). A slot whose partner is not to be run
(a resumed run that had stored one of them) runs alone and says that instead.

Whether it is worth it on a host is measured by bench/precision.py (docs/decisions.md,
"Duet mode").
"""
from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Mapping, Protocol, TypeVar, runtime_checkable

from ...study.design import PlannedTrial

if TYPE_CHECKING:
    from ...core.outcome import TrialOutcome
    from ...measure.benchmarks import Benchmark
    from ...measure.environments import Environment
    from .prepare import Prepared


class ReadySlot(Protocol):
    """A slot its executor made ready: what duet mode reads of it."""
    slot: PlannedTrial
    bench: Benchmark
    params: dict
    error: str | None          # why its trial fails without being measured, or None


R = TypeVar("R", bound=ReadySlot)


class SlotSteps(Protocol[R]):
    """The slot executor's three steps (one slot from start to store, split so that two
    slots are measured at once): make it ready, measure it (on any thread), record it."""

    def ready(self, slot: PlannedTrial, others: tuple[Environment, ...] = ()) -> R:
        """Make the slot's environment ready, and `others` with it (kept running)."""

    def measure(self, ready: R) -> TrialOutcome:
        """The trial; stores nothing."""

    def record(self, ready: R, result: TrialOutcome | None) -> bool:
        """Store the trial (None: its failure to start); True when it is ok."""


class PinsApart(Protocol):
    """The keeper's part duet mode uses: the run's environments and pinning two apart."""

    @property
    def envs(self) -> Mapping[str, Environment]:
        """The run's environments by label."""

    def pin_apart(self, envs: list[Environment], bench: Benchmark,
                  params: dict) -> list[list[int]] | None:
        """Pin the environments onto disjoint CPUs at once: each one's CPUs, or None."""


@runtime_checkable
class Pairs(Protocol):
    """What duet mode is handed: the run whose slots it runs pair by pair, as much of it as
    duet uses. The runner's session (execution/run/session.py) is one; duet mode imports
    nothing of the runner, its session or the executor."""
    prepared: Prepared

    @property
    def executor(self) -> SlotSteps[Any]:
        """The slot executor."""

    @property
    def keeper(self) -> PinsApart:
        """The keeper of the run's environments."""

    def slot_ran(self, slot: PlannedTrial, ok: bool) -> None:
        """Count a slot that ran and move the progress line on."""

    def describe(self, text: str) -> None:
        """The progress line's description."""


def pairs(slots: list[PlannedTrial]) -> list[tuple[PlannedTrial, ...]]:
    """The slots in plan order as units: (slot, partner) where both are to be run (the
    partner: same block and case, the other environment), else (slot,). Pure."""
    index = {(s.trial, s.benchmark): [] for s in slots}
    for s in slots:
        index[(s.trial, s.benchmark)].append(s)
    out, seen = [], set()
    for s in slots:
        if s in seen:
            continue
        group = index[(s.trial, s.benchmark)]
        mates = [m for m in group if m is not s and m not in seen]
        unit = (s, mates[0]) if mates else (s,)
        seen.update(unit)
        out.append(unit)
    return out


def overlap(a: tuple[float, float], b: tuple[float, float]) -> float:
    """How much of the longer of two intervals the two share (0..1). Pure."""
    shared = min(a[1], b[1]) - max(a[0], b[0])
    longest = max(a[1] - a[0], b[1] - b[0])
    return max(0.0, shared) / longest if longest > 0 else 0.0


def run_duet(session: Pairs, slots: list[PlannedTrial]) -> None:
    """Run `slots` of the run `session` runs (its run_slots' contract) pair by pair."""
    seed = session.prepared.study.seed
    for unit in pairs(slots):
        if len(unit) == 1:
            _alone(session, unit[0])
        else:
            _together(session, unit, random.Random(f"{seed}:duet:{unit[0].trial}:"
                                                   f"{unit[0].benchmark}"))


def _alone(session: Pairs, slot: PlannedTrial) -> None:
    ex = session.executor
    session.describe(f"{slot.environment} · {slot.benchmark} (alone)")
    ready = ex.ready(slot)
    result = None
    if ready.error is None:
        result = ex.measure(ready)
        result.detail["duet"] = {"partner": None, "why": "its partner was not to be run"}
    session.slot_ran(slot, ex.record(ready, result))


def _together(session: Pairs, unit: tuple[PlannedTrial, PlannedTrial],
              rng: random.Random) -> None:
    ex, keeper = session.executor, session.keeper
    a, b = unit
    session.describe(f"{a.environment} ‖ {b.environment} · {a.benchmark}")
    envs = (keeper.envs[a.environment], keeper.envs[b.environment])
    ready_a = ex.ready(a, others=(envs[1],))
    ready_b = ex.ready(b, others=(envs[0],))
    if ready_a.error is None and ready_b.error is None:
        order = [0, 1]
        rng.shuffle(order)
        sets = keeper.pin_apart([envs[i] for i in order], ready_a.bench, ready_a.params)
        cpus = {order[k]: sets[k] for k in range(2)} if sets is not None else {0: None, 1: None}
        results, spans = _measure_both(ex, (ready_a, ready_b))
        for i, (ready, result) in enumerate(zip((ready_a, ready_b), results)):
            other = (ready_b, ready_a)[i]
            result.detail["duet"] = {
                "partner": other.slot.environment, "cpus": cpus[i],
                "overlap": round(overlap(spans[0], spans[1]), 4),
                "start_skew_s": round(spans[i][0] - spans[1 - i][0], 6)}
        for ready, result in zip((ready_a, ready_b), results):
            session.slot_ran(ready.slot, ex.record(ready, result))
        return
    for ready in (ready_a, ready_b):         # one could not be made ready: the other alone
        result = None
        if ready.error is None:
            result = ex.measure(ready)
            result.detail["duet"] = {"partner": None, "why": "its partner could not start"}
        session.slot_ran(ready.slot, ex.record(ready, result))


def _measure_both(ex: SlotSteps[Any], readies: tuple[ReadySlot, ReadySlot]):
    barrier = threading.Barrier(2)
    spans = [None, None]

    def one(i):
        barrier.wait(timeout=60)
        t0 = time.monotonic()
        try:
            return ex.measure(readies[i])
        finally:
            spans[i] = (t0, time.monotonic())

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, range(2)))
    return results, spans
