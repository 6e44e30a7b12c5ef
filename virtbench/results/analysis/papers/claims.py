"""The study's claims (study_claims.py) checked on a run with the verdicts' statistics
(stats.claims): each relation from the blocks' log ratios (unpaired when values of 0 or
below have no logarithm, or the report is unpaired), Holm over every relation of every
claim, then each claim's status from its relations. Pure: reads rows, not the store."""
from __future__ import annotations

import zlib

import numpy as np

from ....core.decisions import ClaimStatus
from ....foundations.model import ClaimLink, ClaimResult
from ....foundations.stats import claims as sc
from ...report.words import decisions as words
from ..rows import Key, Row


def _seed(*parts: str) -> int:
    return zlib.crc32("\x1f".join(parts).encode())


def labels_by_spec(envs: list[dict]) -> dict[str, str]:
    """Normalised spec (and the spec a target stands for) -> the run's label."""
    from ....study.design import normalize_spec
    out = {}
    for e in envs:
        for spec in (e["spec"], (e.get("metadata") or {}).get("stands_for")):
            if not spec:
                continue
            try:
                out[normalize_spec(spec)] = e["label"]
            except Exception:       # a spec this version no longer parses: leave it unmatched
                continue
    return out


def _links(relation: dict, threshold_pct: float) -> list[tuple[str, str, str, float]]:
    """(left name, right name, op, bound) per relation; op >=, <= or == (bound: ±%)."""
    kind = relation["kind"]
    if kind == "ratio":
        return [(relation["left"], relation["right"], relation["op"], relation["bound"])]
    if kind == "within":
        return [(relation["left"], relation["right"], sc.WITHIN,
                 relation.get("within_pct") or threshold_pct)]
    op = sc.AT_LEAST if relation["op"] == ">" else sc.AT_MOST
    names = relation["names"]
    return [(a, b, op, 1.0) for a, b in zip(names, names[1:])]


def _relation_text(op: str, bound: float) -> str:
    if op == sc.WITHIN:
        return f"within ±{bound:g} %"
    if bound == 1.0:
        return "> 1" if op == sc.AT_LEAST else "< 1"
    return f"{op} {bound:g}"


def _positive(row: Row, ref: Row) -> bool:
    common = set(row.by_block) & set(ref.by_block)
    return len(common) >= 2 and all(np.isfinite(v) and v > 0 for b in common
                                    for v in (row.by_block[b], ref.by_block[b]))


def _relation(row: Row, ref: Row, op: str, bound: float, mode: str, alpha: float,
              seed: int) -> sc.Relation:
    paired = mode != "unpaired" and _positive(row, ref)
    if op == sc.WITHIN:
        if paired:
            return sc.within_relation(row.by_block, ref.by_block, bound, row.higher_is_better,
                                      alpha, True, seed)
        return sc.within_relation(row.values, ref.values, bound, row.higher_is_better, alpha,
                                  False, seed)
    if paired:
        return sc.ratio_relation(row.by_block, ref.by_block, op, bound, alpha)
    return sc.ratio_relation_unpaired(row.values, ref.values, op, bound, alpha, seed)


def check_claims(claims: list[dict], envs: list[dict], rows: dict[Key, Row], *, mode: str,
                 threshold_pct: float, alpha: float, run_id: str) -> list[ClaimResult]:
    label_of = labels_by_spec(envs)
    results: list[ClaimResult] = []
    pending: list[tuple[int, ClaimLink, sc.Relation]] = []
    for i, c in enumerate(claims):
        names = {n: label_of.get(spec) for n, spec in c["environments"].items()}
        result = ClaimResult(text=c["text"], source=c["source"], benchmark=c["benchmark"],
                             metric=c["metric"], holds_if=c["holds_if"], environments=names,
                             note=c.get("note"), status=ClaimStatus.NOT_MEASURED)
        results.append(result)
        links = _links(c["relation"], threshold_pct)
        used = list(dict.fromkeys(n for a, b, _, _ in links for n in (a, b)))
        absent = [n for n in used if names.get(n) is None]
        if absent:
            result.message = words.not_measured(
                [(n, c["environments"][n]) for n in absent])
            continue
        missing = [names[n] for n in used
                   if (names[n], c["benchmark"], c["metric"]) not in rows]
        if missing:
            result.message = words.not_in_run(c["metric"], c["benchmark"], missing)
            continue
        for a, b, op, bound in links:
            row = rows[(names[a], c["benchmark"], c["metric"])]
            ref = rows[(names[b], c["benchmark"], c["metric"])]
            rel = _relation(row, ref, op, bound, mode, alpha,
                            _seed(run_id, str(i), names[a], names[b]))
            link = ClaimLink(left=names[a], right=names[b], relation=_relation_text(op, bound))
            pending.append((i, link, rel))
    adjusted = sc.adjust_claims([rel for _, _, rel in pending], alpha)
    for (i, link, _), rel in zip(pending, adjusted):
        link.status, link.analysis = rel.status, rel.analysis
        link.estimate, link.ci_low, link.ci_high = rel.estimate, rel.ci_low, rel.ci_high
        link.p_value, link.p_holm, link.blocks = rel.p_value, rel.p_holm, rel.blocks
        link.blocks_needed = rel.blocks_needed
        link.message = words.relation_message(rel, reference=link.right)
        results[i].links.append(link)
    for r in results:
        if r.links:
            r.status = overall(r.links)
            r.message = words.claim_message(r.status, r.links)
    return results


def overall(links: list[ClaimLink]) -> ClaimStatus:
    """A claim's status from its relations': does not hold when one does not, holds when
    every one holds, else inconclusive."""
    if any(link.status == ClaimStatus.NOT_HOLDS for link in links):
        return ClaimStatus.NOT_HOLDS
    if all(link.status == ClaimStatus.HOLDS for link in links):
        return ClaimStatus.HOLDS
    return ClaimStatus.INCONCLUSIVE
