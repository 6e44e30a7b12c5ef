"""Two runs side by side: environments paired by label, the change per metric with a verdict
that knows its power, the rows only one run has, and what differs between paired
environments (a change of kernel or accelerator explains a change of figures)."""
from __future__ import annotations

import zlib

from ...core.decisions import CompareVerdict
from ...core.errors import VirtbenchError
from ...foundations import stats
from ...foundations.model import (CompareRow, Comparison, MetadataDifference, PairDifferences,
                                  Result, RunReport)
from ..report.words import compare as words
from .facts.differences import host_facts, pair
from .references import label_named

def _seed(*parts: str) -> int:
    return zlib.crc32("\x1f".join(parts).encode())


def environment_pairs(a, b, pairs: dict[str, str] | None = None) -> dict[str, str]:
    """Which environment of run B each environment of run A is compared with.

    By label; `pairs` (A label -> B label) adds or overrides; and two runs of one
    environment each are paired whatever their labels (1 vCPU in A against 2 in B, say)."""
    a, b = RunReport.of(a), RunReport.of(b)
    labels_a = [e.label for e in a.environments]
    labels_b = [e.label for e in b.environments]
    mapping = {label: label for label in labels_a if label in labels_b}
    if not pairs and len(labels_a) == 1 and len(labels_b) == 1:
        mapping = {labels_a[0]: labels_b[0]}
    for la, lb in (pairs or {}).items():
        if la not in labels_a or lb not in labels_b:
            raise VirtbenchError(f"--pair {la} --with {lb}: run A has {', '.join(labels_a)}; "
                                 f"run B has {', '.join(labels_b)}")
        mapping[la] = lb
    return mapping


WITH_FIX = "write --pair LABEL_A --with LABEL_B"


def names_of(report) -> dict[str, str]:
    """What names each environment of a run, for --pair: its label, and (a run stored
    before name=LABEL became the label: `native/twin`) its stored name when no other
    environment has it -> the label."""
    envs = [{"label": e.label, "options": e.options, "metadata": e.metadata}
            for e in RunReport.of(report).environments]
    out = {e["label"]: e["label"] for e in envs}
    for e in envs:
        for name in ((e["options"] or {}).get("name"), (e["metadata"] or {}).get("name")):
            if name and name not in out and label_named(name, envs) == e["label"]:
                out[name] = e["label"]
    return out


def resolve_pairs(items: list[str], withs: list[str] | None, labels_a, labels_b
                  ) -> dict[str, str]:
    """`--pair` values (with `--with`, one each: whole labels; without, `A=B`) as A label ->
    B label. `labels_a`, `labels_b`: each run's labels, or what names them -> the label
    (names_of). A label may itself hold `=` (`qemu-tcg/ide/e1000/cache=writethrough`): `A=B`
    is split at the `=` that yields a label of run A and one of run B; when none does, or
    more than one, a one-line error names the way out."""
    names_a = labels_a if isinstance(labels_a, dict) else {x: x for x in labels_a}
    names_b = labels_b if isinstance(labels_b, dict) else {x: x for x in labels_b}
    shown_a, shown_b = sorted(set(names_a.values())), sorted(set(names_b.values()))
    if withs:
        if len(withs) != len(items):
            raise VirtbenchError(f"--with: give one per --pair ({len(items)} --pair, "
                                 f"{len(withs)} --with)")
        return {names_a.get(a, a): names_b.get(b, b) for a, b in zip(items, withs)}
    out = {}
    for item in items:
        fits = [(item[:i], item[i + 1:]) for i, c in enumerate(item)
                if c == "=" and item[:i] in names_a and item[i + 1:] in names_b]
        if len(fits) == 1:
            out[names_a[fits[0][0]]] = names_b[fits[0][1]]
        elif not fits:
            raise VirtbenchError(f"--pair {item}: no '=' in it splits it into a label of run A "
                                 f"({', '.join(shown_a)}) and one of run B "
                                 f"({', '.join(shown_b)}); {WITH_FIX}")
        else:
            ways = ", ".join(f"{a!r} with {b!r}" for a, b in fits)
            raise VirtbenchError(f"--pair {item} splits more than one way ({ways}); {WITH_FIX}")
    return out


def fact_differences(a, b, mapping: dict[str, str]) -> list[PairDifferences]:
    """Per paired environment, the facts of its fingerprint that differ from run A to run B
    (analysis/differences.py: one environment in two runs, every fact counts)."""
    a, b = RunReport.of(a), RunReport.of(b)
    envs_a = {e.label: e for e in a.environments}
    envs_b = {e.label: e for e in b.environments}
    host_a = host_facts(a.run, list(a.environments))
    host_b = host_facts(b.run, list(b.environments))
    out = []
    for la, lb in mapping.items():
        if la in envs_a and lb in envs_b:
            where = la if la == lb else f"{la} → {lb}"
            out.append(pair(where, la, envs_a[la], envs_b[lb], host_a, host_b,
                            head=f"{where}, run A → run B"))
    return out


def metadata_differences(a, b, mapping: dict[str, str],
                         facts: list[PairDifferences] | None = None) -> list[MetadataDifference]:
    """The run-level quick flag and host name, each benchmark's parameters, and per paired
    environment each fact that differs (`facts`, or fact_differences; the host name once,
    as the runs'), wherever A and B differ."""
    a, b = RunReport.of(a), RunReport.of(b)
    out = []
    for key, name in (("quick", "quick"), ("hostname", "host")):
        va, vb = getattr(a.run, name), getattr(b.run, name)
        if va != vb:
            out.append(MetadataDifference(key=key, a=va, b=vb))
    params_a = {x.label: x.params for x in a.benchmarks}
    params_b = {x.label: x.params for x in b.benchmarks}
    for label in params_a:
        if label in params_b and params_a[label] != params_b[label]:
            out.append(MetadataDifference(key=f"params of {label}", a=params_a[label],
                                          b=params_b[label]))
    for p in facts if facts is not None else fact_differences(a, b, mapping):
        out += [MetadataDifference(environment=p.environment, key=f.name, a=f.a, b=f.b)
                for f in p.facts if f.key != "host"]
    return out


def difference_warning(diffs: list[MetadataDifference]) -> str | None:
    if not diffs:
        return None
    return words.differ_warning(list(dict.fromkeys(d.key for d in diffs)))


def _change(ra: Result, rb: Result, alpha: float, min_change_pct: float, seed: int) -> dict:
    """The change from A to B on one metric, with its verdict (stats/change.py) and its
    words (report/words/compare.py)."""
    if ra.trimmed_mean == 0:
        # no % change from a zero (no retransmits in A, say): the test alone decides
        p = stats.permutation_p_value(rb.samples, ra.samples, seed)
        worse = (rb.trimmed_mean > 0) != ra.higher_is_better
        decided = p is not None and p < alpha and rb.trimmed_mean != 0
        verdict = (CompareVerdict.INCONCLUSIVE if not decided else
                   CompareVerdict.WORSE if worse else CompareVerdict.BETTER)
        return {"ratio": None, "change_pct": None, "ci_low": None, "ci_high": None,
                "p_value": p, "verdict": verdict, "power": None, "trials_needed": None,
                "message": words.zero_message(verdict, p)}
    cmp = stats.trimmed_ratio(rb.samples, ra.samples, ra.higher_is_better, seed=seed)
    v = stats.change_verdict(cmp.overhead_pct, cmp.p_value, ra.n, rb.n, cmp.cv_pooled,
                             alpha, min_change_pct)
    return {"ratio": cmp.ratio, "change_pct": cmp.overhead_pct, "ci_low": cmp.ci_low,
            "ci_high": cmp.ci_high, "p_value": cmp.p_value, "verdict": v.verdict,
            "power": v.power, "trials_needed": v.trials_needed, "message": words.change_message(v)}


def compare_runs(a, b, alpha: float = 0.01, min_change_pct: float = 5.0,
                 pairs: dict[str, str] | None = None) -> Comparison:
    """Pair two analyses (RunReport, or the JSON report's mapping) by (environment,
    benchmark, metric): the change from A to B."""
    a, b = RunReport.of(a), RunReport.of(b)
    mapping = environment_pairs(a, b, pairs)
    index_b = {(r.environment, r.benchmark, r.metric): r for r in b.results}
    rows, used_b, only_a = [], set(), []
    for ra in a.results:
        key_a = (ra.environment, ra.benchmark, ra.metric)
        key_b = (mapping.get(ra.environment), ra.benchmark, ra.metric)
        rb = index_b.get(key_b) if key_b[0] else None
        if rb is None:
            only_a.append(list(key_a))
            continue
        used_b.add(key_b)
        env = ra.environment if key_b[0] == ra.environment else f"{ra.environment} → {key_b[0]}"
        rows.append(CompareRow(
            environment=env, benchmark=ra.benchmark, metric=ra.metric, unit=ra.unit,
            higher_is_better=ra.higher_is_better, a=ra.trimmed_mean, b=rb.trimmed_mean,
            n_a=ra.n, n_b=rb.n,
            **_change(ra, rb, alpha, min_change_pct, _seed(a.run.id, b.run.id, *key_b))))
    only_b = sorted({(r.environment, r.benchmark, r.metric) for r in b.results} - used_b)
    facts = fact_differences(a, b, mapping)
    diffs = metadata_differences(a, b, mapping, facts)
    warnings = [w for w in (difference_warning(diffs), same_run_warning(a, b)) if w]
    return Comparison(a=a.run, b=b.run, alpha=alpha, min_change_pct=min_change_pct,
                      pairs=mapping, rows=rows, only_in_a=only_a,
                      only_in_b=[list(k) for k in only_b], metadata_differences=diffs,
                      differences=facts, warnings=warnings)


def same_run_warning(a: RunReport, b: RunReport) -> str | None:
    """Two environments of one run: compare's test ignores the blocks they share."""
    if not a.run.id or a.run.id != b.run.id:
        return None
    return words.same_run_warning(a.run.id)
