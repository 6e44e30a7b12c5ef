"""Which (environment, benchmark) cases of a run still need another block, and why: what the
adaptive loop (virtbench.adaptive) asks after every block.

The answer is the analysis's (`analysis.undecided_cases(store, run_id)`: the paired
sequential decisions of the stored blocks with Holm over the family, disturbed trials left
out), imported lazily behind `undecided_function()`. Where that function does not exist,
`local_undecided` answers from the stored blocks directly with
stats.sequential.still_undecided, per (environment, metric) row against the run's baseline,
disturbed trials left out, without a family correction (a row it keeps running is at worst
one more block; a claim is never made here).

Either way the answer is normalised to {(environment, benchmark): [why, ...]}.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Mapping

from .stats.sequential import RowState, still_undecided
from .store import Store
from .study import default_baseline

Undecided = Callable[[Store, str], dict[tuple[str, str], list[str]]]
COMPARED_SCOPES = ("single", "aggregate")      # a group's instances, spread, fairness: not rows


def undecided_function() -> Undecided:
    """The analysis's undecided_cases when it exists, else local_undecided."""
    try:
        from .analysis import undecided_cases
    except ImportError:
        return local_undecided
    return lambda store, run_id: normalise(undecided_cases(store, run_id))


def normalise(result: Mapping[Any, Any]) -> dict[tuple[str, str], list[str]]:
    """{(environment, benchmark): rows} in any of the shapes an answer may take (rows as a
    {metric: why} mapping, a list of reasons or rows, one reason) -> {case: [why, ...]};
    cases with nothing undecided left out."""
    out: dict[tuple[str, str], list[str]] = {}
    for key, rows in result.items():
        if isinstance(rows, str):
            whys = [rows]
        elif isinstance(rows, Mapping):
            whys = [f"{metric}: {why}" for metric, why in rows.items()]
        else:
            whys = [str(r) for r in rows]
        if whys:
            out[(str(key[0]), str(key[1]))] = whys
    return out


def disturbed_trials(store: Store, run_id: str) -> set[tuple[str, str, int]]:
    """(environment, benchmark, trial) of the run's trials marked disturbed."""
    return {(t["environment"], t["benchmark"], t["trial"]) for t in store.trials(run_id)
            if (t.get("detail") or {}).get("disturbed")}


def local_undecided(store: Store, run_id: str) -> dict[tuple[str, str], list[str]]:
    run = store.get_run(run_id)
    study = run["study"] or {}
    labels = [e["label"] for e in store.environments(run_id)]
    ref = default_baseline(study.get("baseline"), labels)
    if ref is None:
        return {}
    skip = disturbed_trials(store, run_id)
    values: dict[tuple, dict[int, float]] = defaultdict(dict)
    hib: dict[tuple, bool] = {}
    for s in store.samples(run_id):
        if (s["environment"], s["benchmark"], s["trial"]) in skip:
            continue
        if (s.get("scope") or "single") not in COMPARED_SCOPES:
            continue
        key = (s["environment"], s["benchmark"], s["metric"], s.get("scope") or "single")
        values[key][s["trial"]] = s["value"]
        hib[key] = bool(s["higher_is_better"])
    alpha = float(study.get("alpha") or 0.05)
    threshold = float(study.get("threshold_pct") or 10.0)
    low, high = int(study.get("min_trials") or 6), int(study.get("max_trials") or 60)
    out: dict[tuple[str, str], list[str]] = {}
    for (env, bench, metric, scope), mine in sorted(values.items()):
        theirs = values.get((ref, bench, metric, scope))
        if env == ref or theirs is None:
            continue
        row = RowState(mine, theirs, hib[(env, bench, metric, scope)], threshold, ref)
        try:
            why = still_undecided({metric: row}, alpha, low, high).get(metric)
        except ValueError:
            continue                    # values without a ratio (a zero): no decision to wait for
        if why is not None:
            out.setdefault((env, bench), []).append(f"{metric}: {why}")
    return out
