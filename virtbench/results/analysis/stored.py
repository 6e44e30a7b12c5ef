"""What a stored run says of itself, read the same way by every analysis of it: the analysis
and the correction asked or stored, its study's entries (each environment's `versus` and
`note`) and the records the runner kept in its detail (the adaptive loop's, the calibrated
sections), checked as they are read (a damaged one is one line, DamagedRow). The study
itself is study.design.Study, read back by Study.from_dict. A density sweep's own run
(`virtbench density` stores it: execution/run/density.py SweepRecord) has no trials: its
study is the sweep's request under `density`, its detail's `density` the DensityReport so
far; each step's run names its sweep in its detail (`density_sweep`); its report is its
header and that DensityReport (RunReport.density). Pure."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ...core.errors import VirtbenchError
from ...foundations.model import AdaptiveSummary, RunInfo, RunReport, Section
from ...foundations.model.density import DensityReport
from ...foundations.stats.multiplicity import METHODS as CORRECTIONS
from ...foundations.store import DamagedRow
from ...foundations.store.sweeps import SWEEP_KEY, is_sweep
from ...study.design import EnvironmentEntry, Study
from ...study.schema import Analysis
from .papers.claims import labels_by_spec

ANALYSES = Analysis.__args__


def analysis_mode(study: Study, analysis: str | None) -> str:
    """The analysis the verdicts use: as asked (`--analysis`), else the study's (`analysis`
    key); a paired analysis of a run whose trials were adaptive (`trials = "auto"`) reads
    its blocks with confidence sequences ("sequential")."""
    mode = analysis or study.analysis
    if mode not in ANALYSES:
        raise VirtbenchError(f"analysis {mode!r}: use {' or '.join(ANALYSES)}")
    if mode == "paired" and study.adaptive:
        return "sequential"
    return mode


def correction_of(study: Study, correction: str | None) -> str:
    """The family's correction: as asked (`--correction`), else the study's (`correction`
    key; a run stored before studies could say reads core/defaults.py's)."""
    chosen = correction or study.correction
    if chosen not in CORRECTIONS:
        raise VirtbenchError(f"correction {chosen!r}: use {' or '.join(CORRECTIONS)}")
    return chosen


def versus_labels(study: Study, envs: list[dict]) -> dict[str, str]:
    """environment label -> the label of its own reference (the study's `versus`), for
    the environments whose entry has one and whose reference ran."""
    label_of = labels_by_spec(envs)
    out = {}
    for e in envs:
        entry = study_entry(study, e)
        ref = label_of.get(entry.versus) if entry and entry.versus else None
        if ref and ref != e["label"]:
            out[e["label"]] = ref
    return out


def study_entry(study: Study, env: dict) -> EnvironmentEntry | None:
    """The study file's [[environment]] entry this environment was made from (matched by
    its spec, or the entry it stands for when a target measured it); pure."""
    from ...study.design import normalize_spec
    wanted = set()
    for spec in (env["spec"], (env["metadata"] or {}).get("stands_for")):
        if spec:
            wanted.add(spec)
            try:
                wanted.add(normalize_spec(spec))
            except Exception:       # a spec this version no longer parses
                pass
    for entry in study.environments:
        if entry.spec in wanted:
            return entry
    return None


def environment_note(study: Study, env: dict) -> str | None:
    """The study file's `note` of the environment entry this environment was made from
    (matched by its spec, or the entry it stands for when a target measured it); pure."""
    wanted = {env["spec"], (env["metadata"] or {}).get("stands_for")}
    for entry in study.environments:
        if entry.note and entry.spec in wanted:
            return entry.note
    return None


class StoredCalibration(BaseModel):
    """A case's record under the run detail's "calibration" (virtbench/execution/run/sections.py)."""
    model_config = ConfigDict(extra="ignore")
    environment: str | None = None
    section_s: float | None = None
    repetitions: int | None = None
    min_section_s: float | None = None
    capped: bool = False


class StoredDetail(BaseModel):
    """What the analysis reads of a run's detail (runs.detail, docs/store.md)."""
    model_config = ConfigDict(extra="ignore")
    adaptive: dict[str, Any] | None = None
    calibration: dict[str, StoredCalibration] = {}
    kernels_build: Any = None


def run_detail(run: dict, study: Study) -> tuple[AdaptiveSummary | None, list[Section], Any]:
    """(how adaptive trials ended, the calibrated sections, the kernels' build) from the
    run's detail; DamagedRow when it holds them in another shape than the runner writes."""
    try:
        detail = StoredDetail.model_validate(run.get("detail") or {})
        adaptive = adaptive_summary(detail.adaptive)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(p) for p in error["loc"])
        raise DamagedRow(run["id"], "its row of runs",
                         f"detail.{key}: {error['msg'].replace('Input should', 'must')}") \
            from None
    return adaptive, sections_of(detail.calibration, study.min_section_s), detail.kernels_build


def adaptive_summary(rec: dict | None) -> AdaptiveSummary | None:
    """The run detail's "adaptive" record (virtbench/execution/run/adaptive.py) for the report."""
    if not rec:
        return None
    return AdaptiveSummary.model_validate(
        {**{k: rec.get(k) for k in ("stopped", "spent_s", "budget_s", "min_trials",
                                    "max_trials", "resolution_pct")},
         "blocks": rec.get("blocks") or {}, "undecided": rec.get("undecided") or {},
         "unresolved": rec.get("unresolved") or {}})


def sections_of(calibration: dict[str, StoredCalibration], min_section_s: float
                ) -> list[Section]:
    """The run detail's "calibration" record (virtbench/execution/run/sections.py), one per case; a
    record without its minimum reads the run's own (`min_section_s`, its study's)."""
    return [Section(benchmark=case, environment=c.environment or "", section_s=c.section_s,
                    repetitions=c.repetitions or 1,
                    min_section_s=c.min_section_s if c.min_section_s is not None
                    else min_section_s, capped=c.capped)
            for case, c in sorted(calibration.items())]


# -- a density sweep's run ------------------------------------------------------------
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
    info = RunInfo(**row_header(run), trials_planned=density.trials or None)
    return RunReport(run=info, density=density)


def row_header(run: dict) -> dict[str, Any]:
    """What a run's header (RunInfo) takes from its row of runs as it is: id, study, start
    and end (ISO 8601), quick, status, seed, the virtbench that ran it, the host."""
    def iso(when):
        return when.isoformat() if when else None
    return dict(id=run["id"], study=run["study_name"], started=iso(run["started"]),
                finished=iso(run["finished"]), quick=bool(run["quick"]), status=run["status"],
                seed=run["seed"], virtbench_version=run["virtbench_version"], host=run["host"])
