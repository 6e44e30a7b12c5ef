"""A density sweep kept in the store as it goes (docs/lifecycle.md): a run of its own (no
trials; its study the sweep's request under `density`, its detail's `density` the
DensityReport so far), written when the sweep starts, after each step and when it ends; each
step's run names its sweep in its detail (`density_sweep`). An interrupted sweep keeps the
steps that finished; `virtbench report SWEEP` reads it back (results/analysis/sweep.py)."""
from __future__ import annotations

import dataclasses
import socket

from ... import __version__
from ...foundations.model.density import DensityReport
from ...foundations.store import Store
from ...machinery.host import runproc
from ...results.analysis.sweep import STEP_KEY, SWEEP_KEY


class SweepRecord:
    """The sweep run of one sweep in `store`; `request` is its DensityRequest."""

    def __init__(self, store: Store, request):
        self.store, self.request, self.run_id = store, request, ""

    def open(self, report: DensityReport) -> str:
        """Make the sweep's run (running) and store `report` in it; its id."""
        r = self.request
        study = {"name": f"density {r.spec}", SWEEP_KEY: dataclasses.asdict(r)}
        self.run_id = self.store.create_run(study, seed=0, quick=r.quick, version=__version__,
                                            host=socket.gethostname())
        self.store.update_run_detail(self.run_id,
                                     **{runproc.DETAIL_KEY: runproc.this_process()})
        report.run_id = self.run_id
        self.save(report)
        return self.run_id

    def save(self, report: DensityReport) -> None:
        self.store.update_run_detail(self.run_id, **{SWEEP_KEY: report.model_dump(mode="json")})

    def step(self, step_run_id: str, report: DensityReport) -> None:
        """A step finished: its run names the sweep, the sweep holds the step."""
        self.store.update_run_detail(step_run_id, **{STEP_KEY: self.run_id})
        self.save(report)

    def close(self, report: DensityReport, status: str) -> None:
        """The sweep ended (complete) or was interrupted: its last report, its status."""
        self.save(report)
        self.store.set_run_status(self.run_id, status)
