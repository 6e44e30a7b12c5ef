"""Which measured row each result is compared with.

A single environment's metric is compared with the same metric of the baseline.
A group of N instances (`instances = N`, label `<member label>/xN`, metadata instances = N)
yields an aggregate (`triad_mb_s`: sum or mean over the instances), a spread, a fairness
index and each instance's figure (`triad_mb_s_i0`...):
- each instance's figure is compared with the single baseline's figure (one guest of N
  against one native process);
- the aggregate, spread and fairness are compared only with the baseline kind run at the
  same N (`native:instances=N`, label `native/xN`) when the run has it. Without it there is
  no like-for-like baseline: a sum over N guests against one native process means nothing,
  so those rows get no verdict and say why.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...core.metric_id import INSTANCE, MetricId, identify
from ...foundations.model.run import instance_count, member_label


def label_named(text: str, environments: list[dict]) -> str | None:
    """The label of the run's environment that `text` names: its label, or (a run stored
    before name=LABEL became the label, when `native:name=twin` was labelled `native/twin`)
    the one environment whose stored name is `text`; None when none or several are."""
    labels = [e["label"] for e in environments]
    if text in labels:
        return text
    named = [e["label"] for e in environments
             if text in ((e.get("options") or {}).get("name"),
                         (e.get("metadata") or {}).get("name"))]
    return named[0] if len(named) == 1 else None


def metric_identity(metric: MetricId | str, metrics: set[str] | None = None) -> MetricId:
    """`metric` as a MetricId: as given, or (a bare name, from a caller that has no identity)
    read from its row's metric names by metric_id.identify."""
    if isinstance(metric, MetricId):
        return metric
    return identify((metrics or set()) | {metric})[metric]


@dataclass(frozen=True)
class Reference:
    label: str | None          # environment compared with; None: no verdict
    metric: str | None         # its metric (differs for per-instance rows)
    basis: str                 # "single" | "per-instance" | "same-instances" | "baseline" | "none"
    note: str | None = None    # said in the report when there is no like-for-like reference
    short: str | None = None   # the same in a few words, for a table cell


class References:
    """Chooses the reference of every (environment, metric) of one run."""

    def __init__(self, baseline: str | None, environments: list[dict]):
        self.baseline = baseline
        self.count = {e["label"]: instance_count(e["label"], e.get("metadata")) for e in environments}
        base_member = member_label(baseline) if baseline else None
        labels = set(self.count)
        # the single baseline: the baseline itself, or its member when the baseline is a group
        if baseline and self.count.get(baseline, 1) == 1:
            self.single = baseline
        else:
            self.single = base_member if base_member in labels else None
        # the baseline kind at each N
        self.at_n: dict[int, str] = {}
        for label, n in self.count.items():
            if n > 1 and base_member and member_label(label) == base_member:
                self.at_n[n] = label

    def for_row(self, env: str, metric: MetricId | str,
                metrics: set[str] | None = None) -> Reference:
        """The reference of `env`'s `metric` (its identity; a bare name is identified among
        `metrics`, the row's metric names)."""
        metric = metric_identity(metric, metrics)
        n = self.count.get(env, 1)
        if n == 1:
            if env == self.baseline or env == self.single or self.single is None:
                return Reference(None, None, "baseline" if env in (self.baseline, self.single)
                                 else "none")
            return Reference(self.single, metric.name, "single")
        if metric.scope == INSTANCE:
            if self.single is None:
                return Reference(None, None, "none")
            return Reference(self.single, metric.base, "per-instance")
        if self.baseline is None:
            return Reference(None, None, "none")
        ref = self.at_n.get(n)
        if ref == env:
            return Reference(None, None, "baseline")
        if ref is None:
            kind = member_label(self.baseline)
            return Reference(None, None, "none",
                             f"no like-for-like baseline: the run has no {kind}/x{n} "
                             f"({kind}:instances={n}); the aggregate over {n} instances is not "
                             "compared with a single baseline process (per-instance rows are)",
                             "no like-for-like baseline")
        return Reference(ref, metric.name, "same-instances")
