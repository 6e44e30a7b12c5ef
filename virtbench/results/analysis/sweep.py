"""A density sweep's run read back (docs/lifecycle.md): `virtbench density` stores its sweep
as a run of its own with no trials, its study the sweep's request (under `density`) and its
detail's `density` the DensityReport so far (execution/run/sweepbook.py writes it after
each step); each step's run names its sweep in its detail (`density_sweep`). The report of
a sweep's run is its run header and that DensityReport (RunReport.density); pure."""
from __future__ import annotations

from ...core.errors import VirtbenchError
from ...foundations.model import RunInfo, RunReport
from ...foundations.model.density import DensityReport

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


def sweep_report(run: dict) -> RunReport | None:
    """The report of a density sweep's run: its header and its stored DensityReport; None
    for any other run. A sweep run whose detail holds no readable report is one line."""
    if not is_sweep(run):
        return None
    stored = (run.get("detail") or {}).get(SWEEP_KEY)
    try:
        density = DensityReport.of(stored if stored is not None else {})
    except ValueError as exc:
        raise VirtbenchError(f"run {run['id']}: its stored density sweep cannot be read "
                             f"({str(exc).splitlines()[0]}); run `virtbench density` "
                             "again") from None
    density.run_id = run["id"]

    def iso(x):
        return x.isoformat() if x else None
    info = RunInfo(id=run["id"], study=run["study_name"], started=iso(run["started"]),
                   finished=iso(run["finished"]), quick=bool(run["quick"]),
                   status=run["status"], seed=run["seed"],
                   virtbench_version=run["virtbench_version"], host=run["host"],
                   trials_planned=density.trials or None)
    return RunReport(run=info, density=density)
