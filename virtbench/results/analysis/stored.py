"""What a stored run says of itself, read the same way by every analysis of it: its settings
(alpha, method notes, the analysis and the correction asked or stored, adaptive trials or
not), its study's entries (each environment's `versus` and `note`) and the records the runner
kept in its detail (the adaptive loop's, the calibrated sections). Pure."""
from __future__ import annotations

from ...core.defaults import ALPHA as DEFAULT_ALPHA
from ...core.errors import VirtbenchError
from ...foundations.model import AdaptiveSummary, Section
from ...foundations.stats.multiplicity import METHODS as CORRECTIONS
from .claims import labels_by_spec


def run_settings(run: dict) -> tuple[float, dict[str, str]]:
    """(alpha, {benchmark label: method note}) of a stored run: from its run metadata when
    the store keeps one (`meta`), else from the stored study (alpha, each benchmark's
    method_note); alpha 0.05 and no notes by default."""
    meta = run.get("meta") or run.get("metadata") or {}
    study = run.get("study") or {}
    alpha = meta.get("alpha", study.get("alpha"))
    notes = meta.get("method_notes") or study.get("method_notes") or {
        b["label"]: b["method_note"] for b in study.get("benchmarks", []) if b.get("method_note")}
    return float(alpha) if alpha is not None else DEFAULT_ALPHA, dict(notes)


def analysis_mode(study: dict, analysis: str | None) -> str:
    """The analysis the verdicts use: as asked (`--analysis`), else the study's (`analysis`
    key, paired by default); a paired analysis of a run whose trials were adaptive
    (`trials = "auto"`) reads its blocks with confidence sequences ("sequential")."""
    mode = analysis or study.get("analysis") or "paired"
    if mode not in ("paired", "unpaired"):
        raise VirtbenchError(f"analysis {mode!r}: use paired or unpaired")
    if mode == "paired" and adaptive(study):
        return "sequential"
    return mode


def correction_of(study: dict, correction: str | None) -> str:
    """The family's correction: as asked (`--correction`), else the study's (`correction`
    key), Holm by default (and for runs stored before studies could say)."""
    chosen = correction or study.get("correction") or "holm"
    if chosen not in CORRECTIONS:
        raise VirtbenchError(f"correction {chosen!r}: use {' or '.join(CORRECTIONS)}")
    return chosen


def adaptive(study: dict) -> bool:
    """Were the run's trials adaptive? The runner stores `adaptive: true` (and the plan's
    min_trials as `trials`); a study dict as written may still say trials = "auto"."""
    return bool(study.get("adaptive")) or study.get("trials") == "auto"


def versus_labels(study: dict, envs: list[dict]) -> dict[str, str]:
    """environment label -> the label of its own reference (the study's `versus`), for
    the environments whose entry has one and whose reference ran."""
    label_of = labels_by_spec(envs)
    out = {}
    for e in envs:
        entry = study_entry(study, e)
        ref = label_of.get(entry.get("versus")) if entry and entry.get("versus") else None
        if ref and ref != e["label"]:
            out[e["label"]] = ref
    return out


def study_entry(study: dict, env: dict) -> dict | None:
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
    for entry in study.get("environments") or []:
        if entry.get("spec") in wanted:
            return entry
    return None


def environment_note(study: dict, env: dict) -> str | None:
    """The study file's `note` of the environment entry this environment was made from
    (matched by its spec, or the entry it stands for when a target measured it); pure."""
    wanted = {env["spec"], (env["metadata"] or {}).get("stands_for")}
    for entry in study.get("environments") or []:
        if entry.get("note") and entry.get("spec") in wanted:
            return entry["note"]
    return None


def adaptive_summary(detail: dict) -> AdaptiveSummary | None:
    """The run detail's "adaptive" record (virtbench/execution/run/adaptive.py) for the report."""
    rec = detail.get("adaptive")
    if not rec:
        return None
    return AdaptiveSummary(**{k: rec.get(k) for k in ("stopped", "spent_s", "budget_s",
                                                      "min_trials", "max_trials",
                                                      "resolution_pct")},
                           blocks=rec.get("blocks") or {}, undecided=rec.get("undecided") or {},
                           unresolved=rec.get("unresolved") or {})


def sections_of(detail: dict) -> list[Section]:
    """The run detail's "calibration" record (virtbench/execution/run/sections.py), one per case."""
    return [Section(benchmark=case, environment=c.get("environment") or "",
                    section_s=c.get("section_s"), repetitions=int(c.get("repetitions") or 1),
                    min_section_s=c.get("min_section_s", 0.5), capped=bool(c.get("capped")))
            for case, c in sorted((detail.get("calibration") or {}).items())]
