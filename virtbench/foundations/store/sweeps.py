"""A density sweep in the store (docs/store.md, docs/lifecycle.md): its own run has no
trials; its study holds the sweep's request under `density` and its detail the sweep's
report under `density` (results/analysis/stored.py reads it back); each step's run names
its sweep in its detail (`density_sweep`). Pure: a run's row (as get_run or list_runs give
it) in, a fact out, so `virtbench runs` tells them apart without the analysis."""
from __future__ import annotations

SWEEP_KEY = "density"          # a sweep run's study and detail key: its request, its report
STEP_KEY = "density_sweep"     # a step run's detail key: the id of the sweep it is a step of


def is_sweep(run: dict) -> bool:
    """Is this stored run a density sweep's own run?"""
    study = run.get("study")
    return isinstance(study, dict) and SWEEP_KEY in study


def sweep_of(run: dict) -> str | None:
    """The id of the sweep this run is a step of (None: not a step)."""
    got = (run.get("detail") or {}).get(STEP_KEY)
    return got if isinstance(got, str) else None


def listed_study(run: dict) -> str:
    """A run's study as a list of runs shows it (`virtbench runs`, the web view): a density
    sweep's run and its steps said."""
    if is_sweep(run):
        return f"{run['study_name']} (density sweep)"
    of = sweep_of(run)
    return (run["study_name"] or "") + (f" (a step of density sweep {of})" if of else "")
