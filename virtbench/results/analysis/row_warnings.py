"""The warnings of a run's rows and of its baseline that the analysis makes beside the
figures (docs/warnings.md): a row with no verdict against its reference, trials left out as
disturbed, a baseline that itself runs under a hypervisor. Pure."""
from __future__ import annotations

from ...machinery.machine import hypervisor
from ...foundations.model import RunWarning
from .references import Reference
from .rows import Key


def reference_warnings(key: Key, ref: Reference, no_ratio: bool,
                        warnings: list[RunWarning]) -> list[RunWarning]:
    """Why a row has no verdict against its reference, as a warning (a case without a
    like-for-like baseline is said once)."""
    env, bench, metric = key
    if not ref.note:
        return []
    if no_ratio:
        return [RunWarning(environment=env, benchmark=bench, metric=metric, kind="no_ratio",
                           message=ref.note)]
    if ref.basis != "none":
        return [RunWarning(environment=env, benchmark=bench, metric=metric,
                           kind="zero_reference", message=ref.note)]
    if any(w.kind == "no_like_for_like_baseline" and w.environment == env
           and w.benchmark == bench for w in warnings):
        return []
    return [RunWarning(environment=env, benchmark=bench, kind="no_like_for_like_baseline",
                       message=ref.note)]


def disturbed_warnings(rows) -> list[RunWarning]:
    """A `disturbed_trials` warning per environment x benchmark with trials left out."""
    seen: dict[tuple[str, str], dict[int, str]] = {}
    for (env, bench, _), row in rows.items():
        for d in row.disturbed:
            seen.setdefault((env, bench), {})[d.trial] = d.reason
    return [RunWarning(environment=env, benchmark=bench, kind="disturbed_trials",
                       message=f"{len(why)} trial(s) left out of the statistics as disturbed: "
                               + "; ".join(f"trial {t}: {r}" for t, r in sorted(why.items())))
            for (env, bench), why in seen.items()]


def unmeasured_warnings(rows) -> list[RunWarning]:
    """A `no_usable_trials` warning per environment x benchmark whose every trial was left out
    as disturbed: its rows have no sample to make figures of, and the report leaves them out
    (before: a traceback, "no samples")."""
    empty = sorted({(env, bench) for (env, bench, _), row in rows.items() if not row.values})
    return [RunWarning(environment=env, benchmark=bench, kind="no_usable_trials",
                       message="every trial was left out of the statistics as disturbed: no "
                               "figures; run it again when the host is quieter")
            for env, bench in empty]


def baseline_layers(md: dict) -> str | None:
    """Pure: what a baseline's fingerprint says it runs under, the hypervisor and the container
    apart ("KVM (Firecracker), inside a docker container"), or None on bare metal. A run
    stored before both layers were kept names its container only: its hypervisor is "one this
    run did not record"."""
    hyper, product, container = hypervisor.layers_of(md)
    if hyper in (None, hypervisor.BARE) and not md.get("hypervisor_flag"):
        return None
    if hyper in (None, hypervisor.BARE):
        what = "one this run did not record (CPUID hypervisor bit set)"
    else:
        what = hypervisor.hypervisor_words(hyper, product)
    return what + (f", inside a {container} container" if container else "")


def virtualized_baseline(envs: list[dict], baseline: str | None) -> list[RunWarning]:
    """A warning when the baseline itself runs under a hypervisor, naming it and the
    container between it and the baseline."""
    out = []
    for e in envs:
        what = baseline_layers(e.get("metadata") or {}) if e["label"] == baseline else None
        if what:
            out.append(RunWarning(
                environment=e["label"], kind="baseline_virtualized",
                message=f"the baseline itself runs under a hypervisor, {what}; "
                        "overheads are relative to that, not to bare metal"))
    return out
