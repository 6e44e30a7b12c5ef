"""The study's published figures beside the measured results they belong to."""
from __future__ import annotations

from ....foundations.model import PublishedFigure, PublishedMatch, Result


def attach_published(published: list[dict], envs: list[dict], results: list[Result],
                     baseline: str | None) -> list[PublishedFigure]:
    """Put the study's published figure beside each measured result it belongs to, as
    result.published (ratio, verdict, source, versus, measured_ratio...); the measured ratio
    is against the same reference as the published one (the baseline unless `versus`).
    Returns the published figures no result of this run matches (e.g. a Xen environment
    virtbench could not start), so that reports can still show them."""
    from ....study.design import normalize_spec
    label_of = {}
    for e in envs:
        for spec in (e["spec"], (e.get("metadata") or {}).get("stands_for")):
            if not spec:
                continue
            try:
                label_of[normalize_spec(spec)] = e["label"]
            except Exception:   # a spec this version no longer parses: leave it unmatched
                continue
    by_key = {(r.environment, r.benchmark, r.metric): r for r in results}
    unmatched = []
    for p in published:
        label = label_of.get(p["environment"])
        versus = label_of.get(p["versus"]) if p.get("versus") else baseline
        r = by_key.get((label, p["benchmark"], p["metric"])) if label else None
        if r is None:
            unmatched.append(PublishedFigure.model_validate(p))
            continue
        ref = by_key.get((versus, p["benchmark"], p["metric"])) if versus else None
        measured = None
        if ref is not None and ref.trimmed_mean:
            measured = r.trimmed_mean / ref.trimmed_mean
        r.published = PublishedMatch(
            ratio=p.get("ratio"), ratio_derived=p.get("ratio_derived", False),
            value=p.get("value"), versus_value=p.get("versus_value"), verdict=p.get("verdict"),
            source=p["source"], note=p.get("note"), versus=versus, measured_ratio=measured)
    return unmatched
