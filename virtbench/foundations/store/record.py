"""A trial as the store is handed it (Store.record_trial): what one trial is, and the rows
it is written as (pure). One row of `trials`, one row of `samples` per value."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from .sample import Sample, identified
from .values import jsonable, now, output_tail

STATUSES = ("ok", "failed")


@dataclass(frozen=True)
class TrialRecord:
    """One trial: of `environment` (its label) and the benchmark case `benchmark` (its
    label; `benchmark_name` and `params` what it ran), trial number `trial` (negative: a
    warm-up) at `seq` in the run's order; `status` ok or failed with its samples (a failed
    trial's: what it measured before it failed, evidence, never statistics), its error,
    exit status and output, its timing (`started`, default when recorded; `wall_s`), the
    environment's `boot` it ran in, and `detail` (load, disturbance...)."""

    environment: str
    benchmark: str
    benchmark_name: str
    params: dict
    trial: int
    seq: int
    status: str
    samples: list[Sample] = field(default_factory=list)
    error: str | None = None
    exit: int | None = None
    stdout: str = ""
    stderr: str = ""
    wall_s: float | None = None
    started: datetime | None = None
    warmup: bool = False
    boot: int | None = None
    detail: dict | None = None

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"trial status {self.status!r}: ok or failed")

    def row(self, run_id: str) -> dict:
        """The trial's row of `trials`, finished now. Of a failed trial's stdout and stderr
        it keeps the last OUTPUT_TAIL_BYTES each (detail says how large they were when
        cut)."""
        detail, stdout, stderr = dict(self.detail or {}), self.stdout, self.stderr
        if self.status != "ok":
            stdout, out_bytes = output_tail(stdout)
            stderr, err_bytes = output_tail(stderr)
            for key, size in (("stdout_bytes", out_bytes), ("stderr_bytes", err_bytes)):
                if size is not None:
                    detail[key] = size
        return dict(run_id=run_id, environment=self.environment, benchmark=self.benchmark,
                    benchmark_name=self.benchmark_name, params=self.params, trial=self.trial,
                    seq=self.seq, status=self.status, error=self.error, exit=self.exit,
                    stdout=stdout, stderr=stderr, wall_s=self.wall_s,
                    started=self.started or now(), finished=now(), warmup=self.warmup,
                    boot=self.boot, detail=jsonable(detail) if detail else None)

    def sample_rows(self, trial_id: int) -> list[dict]:
        """Its rows of `samples`, each value with its metric's identity."""
        return [{"trial_id": trial_id, "metric": s.metric, "value": s.value, "unit": s.unit,
                 "higher_is_better": s.higher_is_better, "base_metric": i.base,
                 "scope": i.scope, "instance": i.instance}
                for s, i in zip(self.samples, identified(self.samples))]
