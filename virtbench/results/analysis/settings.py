"""How one analysis of a stored run reads it: the run's study as one typed, frozen object
(study.design.Study, checked as it is read back: Study.from_dict), with what the command
asked over it (a threshold, another baseline, an analysis, a correction), and each row's
reference. Made once (settings_of) and handed to the report (analysis/run.py) and to the
adaptive runner's question (analysis/undecided.py), so both read a run the same way."""
from __future__ import annotations

import zlib
from collections import defaultdict
from dataclasses import dataclass

from ...core.metric_id import MetricId, identify
from ...study.baseline import resolve_baseline, stored_candidates
from ...study.design import Study
from ...study.stored import method_notes
from . import decide
from .references import References
from .rows import Key, Row
from .stored import analysis_mode, correction_of, versus_labels


def result_seed(*parts: str) -> int:
    """A stable seed per result, so a report is the same every time it is made."""
    return zlib.crc32("\x1f".join(parts).encode())


@dataclass(frozen=True)
class Settings:
    """What this analysis of the run asks: its threshold, alpha, analysis and correction, and
    which environment each row is compared with."""
    run_id: str
    study: Study                    # the run's, as it stored it (defaults for older runs)
    threshold: float
    alpha: float
    notes: dict[str, str]           # benchmark label -> method note
    mode: str                       # analysis_mode
    correction: str
    envs: list[dict]
    labels: list[str]
    study_baseline: str | None      # the run's own
    baseline: str | None            # the one chosen for this analysis
    refs: References
    versus: dict[str, str]          # environment label -> its own reference's
    planned_trials: int | None

    def comparison(self, key: Key, row: Row, ref_row: Row, *, reference: str,
                   reference_metric: str | None, basis: str, shown_reference: str,
                   same_run: bool) -> decide.ComparisonInputs:
        """The inputs of `key`'s row against `ref_row`, read as this analysis reads them."""
        return decide.ComparisonInputs(
            row=row, ref=ref_row, reference=reference, reference_metric=reference_metric,
            basis=basis, shown_reference=shown_reference, same_run=same_run, mode=self.mode,
            threshold_pct=self.threshold, alpha=self.alpha,
            seed=result_seed(self.run_id, *key, "vs", reference))


def settings_of(store, run: dict, *, threshold_pct: float | None = None, references=None,
                baseline: str | None = None, analysis: str | None = None,
                correction: str | None = None) -> Settings:
    """The analysis' settings: as asked, else the run's (threshold, alpha, analysis,
    correction, baseline), and the references that follow from the baseline. `--baseline`
    names one of the run's environments (resolve_baseline: its label, spec or stored name);
    a damaged stored study is one line (DamagedRow)."""
    run_id = run["id"]
    study = Study.from_dict(run["study"], run_id)
    envs = store.environments(run_id)
    labels = [e["label"] for e in envs]
    candidates = stored_candidates(envs)
    study_baseline = resolve_baseline(None, candidates, stored=study.baseline)
    chosen = resolve_baseline(baseline, candidates, stored=study.baseline, unknown=lambda ls: (
        f"--baseline {baseline}: run {run_id} has no such environment; its environments: "
        f"{', '.join(ls)}"))
    return Settings(
        run_id=run_id, study=study,
        threshold=threshold_pct if threshold_pct is not None else study.threshold_pct,
        alpha=study.alpha, notes=method_notes(run["study"], run_id) or study.method_notes(),
        mode=analysis_mode(study, analysis),
        correction=correction_of(study, correction), envs=envs, labels=labels,
        study_baseline=study_baseline, baseline=chosen,
        refs=(references or References)(chosen, envs), versus=versus_labels(study, envs),
        planned_trials=None if study.adaptive else study.trials)


def identities(samples: list[dict]) -> dict[tuple[str, str, str], MetricId]:
    """(environment, benchmark, metric) -> its identity, as stored with each sample; for a
    store-like source without it, read from the row's metric names (metric_id.identify)."""
    out: dict[tuple[str, str, str], MetricId] = {}
    bare: dict[tuple[str, str], set[str]] = defaultdict(set)
    for s in samples:
        key = (s["environment"], s["benchmark"], s["metric"])
        if s.get("scope"):
            out[key] = MetricId(s["metric"], s.get("base_metric") or s["metric"], s["scope"],
                                s.get("instance"))
        else:
            bare[key[:2]].add(s["metric"])
    for (env, bench), names in bare.items():
        for name, mid in identify(names).items():
            out.setdefault((env, bench, name), mid)
    return out
