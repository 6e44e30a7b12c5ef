"""`--profile exits`: after the measured trials, one profiled trial per environment x benchmark
that can be profiled (its capabilities say so), never one of the measured trials. Each
profile, or why there is none, goes to the store; a resumed run profiles only what it lacks.
A profiled trial whose workload failed runs once more (the first failure in its notes)."""
from __future__ import annotations

import time
from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape

from ...core.errors import AgentError, VirtbenchError
from .keeper import Keeper
from ...foundations.store import Store
from ...measure.benchmarks import Benchmark
from ...measure.environments import Environment


@dataclass(frozen=True)
class ProfileRequest:
    """One profile to take: the case `case` (its benchmark and parameters) in the run's
    environment `label`."""
    label: str
    env: Environment
    case: str
    bench: Benchmark
    params: dict


def profile_exits(store: Store, run_id: str, prepared, keeper: Keeper,
                  console: Console) -> int:
    """Profile every (environment, case) the run measured; returns how many profiles failed."""
    done = {(p["environment"], p["benchmark"]) for p in store.profiles(run_id)
            if p["status"] == "ok"}
    failed = 0
    for label, env in prepared.envs.items():
        answer = env.capabilities().exit_profile
        if not answer:
            console.print(f"[yellow]no exit profile[/] for {escape(label)}: "
                          f"{escape(answer.reason)}", highlight=False)
            store.add_warning(run_id, "profile_skipped", answer.reason, environment=label)
            continue
        try:
            for case, (bench, params) in prepared.cases.items():
                if (label, case) in done or (label, case) in prepared.skip:
                    continue
                console.print(f"profiling {escape(label)} · {escape(case)} "
                              f"({escape(answer.how)}; an extra trial, not a measured one)",
                              highlight=False)
                request = ProfileRequest(label, env, case, bench, params)
                if not _one(store, run_id, keeper, request, console):
                    failed += 1
        finally:
            try:
                env.end_profiling()
            except (VirtbenchError, AgentError, OSError) as exc:
                console.print(f"[yellow]ending profiling of {escape(label)}[/]: "
                              f"{escape(str(exc))}", highlight=False)
    return failed


def _one(store: Store, run_id: str, keeper: Keeper, request: ProfileRequest,
         console: Console) -> bool:
    """One profile; a profiled trial whose benchmark failed (the profiler worked, the
    workload did not) runs once more, and the profile's notes keep the first failure."""
    label, case = request.label, request.case
    t0 = time.monotonic()
    error, profile = _attempt(keeper, request)
    if error and profile is not None:
        console.print(f"[yellow]profiled trial failed[/] {escape(label)} · {escape(case)}: "
                      f"{escape(error)}; once more", highlight=False)
        first, t0 = error, time.monotonic()      # wall_s: the stored trial's own
        error, profile = _attempt(keeper, request)
        if error:
            error = f"{error} (and before it: {first})"
        else:
            profile.notes.append(f"the first profiled trial failed ({first}); this profile is "
                                 "the second's")
    store.record_profile(run_id, label, case, profile=None if error else profile.to_json(),
                         error=error, wall_s=time.monotonic() - t0)
    if error:
        console.print(f"[red]profile failed[/] {escape(label)} · {escape(case)}: "
                      f"{escape(error)}", highlight=False)
        return False
    return True


def _attempt(keeper: Keeper, request: ProfileRequest):
    """(error, profile): the profile is None when the profiler itself failed or never ran."""
    env, bench, params = request.env, request.bench, request.params
    error = keeper.ready(env, bench, params)
    if error is not None:
        return error, None
    try:
        outcome, profile = env.profiled_trial(bench, params)
    except (VirtbenchError, AgentError, OSError) as exc:
        return (str(exc).splitlines()[0] if str(exc) else type(exc).__name__), None
    return outcome.error, profile
