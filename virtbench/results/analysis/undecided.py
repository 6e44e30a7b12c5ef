"""What the runner asks after each block of an adaptive run (`trials = "auto"`): which
(environment, benchmark) cases still have an undecided row, and why, from the samples
stored so far.

A comparison is every one the report will make (analysis/run.py): each row against its
reference (the baseline, an instance's single baseline, a group's baseline at the same N)
and against the environment's own reference (the study's `versus`). Its row needs another
block when stats.sequential.still_undecided says so (confidence sequences: valid whenever
the run stops; inconclusive, or a pass short of the study's `resolution` when it asks one),
or when, read with the sequences and corrected over the whole family (stats.multiplicity,
Holm), it is still inconclusive; until max_blocks. A pass short of the resolution is listed
with its line starting UNRESOLVED: decided, so never called undecided. The reference's
case runs in the same block as the row, so it is listed too ("the reference of ...").
Rows that cannot be read with the sequences are not in the stopping rule: values of 0 or
below (no logarithm), a reference whose trimmed mean is 0, rows of another run."""
from __future__ import annotations

from ...foundations import stats
from ...foundations.stats import multiplicity, sequential
from ...core.decisions import Decided
from ..report.words import decisions as prose
from .rows import disturbed_trials, rows_of
from .settings import identities, settings_of

Case = tuple[str, str]          # (environment, benchmark)
# the reason given for a reference's case, listed so that it runs in the same block as the
# rows that need it (it is not undecided itself: virtbench.execution.run.adaptive.own_reasons)
REFERENCE_OF = "the reference of "
# the start of the line given for a row decided "pass" that runs on only because the study
# asked a finer resolution (`resolution`): decided, so never called undecided, but unresolved
UNRESOLVED = "unresolved: "


def _pairs(rows, ids, refs, versus):
    """(row key, reference row key) of every comparison the report makes."""
    for (env, bench, metric), row in rows.items():
        ref = refs.for_row(env, ids[(env, bench, metric)])
        targets = []
        if ref.label and ref.basis != "host":
            targets.append((ref.label, bench, ref.metric))
        if versus.get(env) and versus[env] != ref.label:
            targets.append((versus[env], bench, metric))
        for target in targets:
            other = rows.get(target)
            if other is None or not row.values or not other.values:
                continue
            common = set(row.by_block) & set(other.by_block)
            if stats.trimmed_mean(other.values) == 0 or not all(
                    v > 0 for b in common for v in (row.by_block[b], other.by_block[b])):
                continue
            yield (env, bench, metric), target


def undecided_cases(store, run_id: str, *, min_blocks: int = sequential.DEFAULT_MIN_BLOCKS,
                    max_blocks: int = sequential.DEFAULT_MAX_BLOCKS,
                    threshold_pct: float | None = None, baseline: str | None = None,
                    resolve_pct: float | None = None, correction: str | None = None
                    ) -> dict[Case, list[str]]:
    """{(environment, benchmark): [why, one line per undecided row]} of the cases that
    need another block; {} when every comparison is decided or at max_blocks. The run is
    read as its report reads it (settings.settings_of: the stored study's threshold, alpha,
    correction and baseline unless `threshold_pct`, `baseline`, `correction` say)."""
    s = settings_of(store, store.get_run(run_id), threshold_pct=threshold_pct,
                    baseline=baseline, correction=correction)
    threshold, alpha, correction = s.threshold, s.alpha, s.correction
    samples = store.samples(run_id)
    rows = rows_of(samples, disturbed_trials(store.trials(run_id)))
    pairs = list(_pairs(rows, identities(samples), s.refs, s.versus))
    states = {(key, target): sequential.RowState(
        rows[key].by_block, rows[target].by_block, rows[key].higher_is_better, threshold)
        for key, target in pairs}
    why = {pair: (UNRESOLVED if u.resolve_pct is not None else "")
           + prose.undecided_reason(u, reference=pair[1][0])
           for pair, u in sequential.still_undecided(states, alpha, min_blocks, max_blocks,
                                                     resolve_pct=resolve_pct).items()}
    decisions = [sequential.decide_sequential(s.env, s.ref, s.higher_is_better, threshold,
                                              alpha, min_blocks)
                 for s in states.values()]
    for pair, d in zip(states, multiplicity.adjust_family(decisions, correction)):
        if pair not in why and d.decision == Decided.INCONCLUSIVE and d.blocks < max_blocks:
            why[pair] = prose.decision_message(d, reference=pair[1][0])
    out: dict[Case, list[str]] = {}
    for (key, target), reason in why.items():
        env, bench, metric = key
        ref = f" vs {target[0]}" + (f" ({target[2]})" if target[2] != metric else "")
        tag = UNRESOLVED if reason.startswith(UNRESOLVED) else ""
        out.setdefault((env, bench), []).append(
            f"{tag}{metric}{ref}: {reason[len(tag):]}")
        out.setdefault((target[0], bench), [])
        line = f"{REFERENCE_OF}{env}'s {metric}"
        if line not in out[(target[0], bench)]:
            out[(target[0], bench)].append(line)
    return out
