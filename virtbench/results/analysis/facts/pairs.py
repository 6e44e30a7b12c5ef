"""A report's differences: each environment against each of its references (the baseline's
row and the study's `versus`), by the fact finder (differences.py); each comparison names
the facts that differ (`vs_baseline.differs_in`)."""
from __future__ import annotations

from ....foundations.model import PairDifferences, RunReport
from .differences import host_facts, pair

SEPARATE = "virtbench report {run} --separate > separate.toml"


def pairs_of(report: RunReport) -> list[tuple[str, str]]:
    """(environment, reference) of every comparison the report makes, in report order."""
    labels = {e.label for e in report.environments}
    out: list[tuple[str, str]] = []
    for r in report.results:
        for vs in ([r.vs_baseline] if r.vs_baseline else []) + list(r.vs_others):
            key = (r.environment, vs.reference)
            if vs.reference in labels and r.environment in labels and key not in out:
                out.append(key)
    order = [e.label for e in report.environments]
    return sorted(out, key=lambda k: (order.index(k[0]), order.index(k[1])))


def report_differences(report: RunReport) -> list[PairDifferences]:
    """What differs between each environment of `report` and its references."""
    envs = {e.label: e for e in report.environments}
    host = host_facts(report.run, list(report.environments))

    def host_of(label: str) -> dict:
        e = envs[label]
        return {**host, "hostname": e.host or host.get("hostname")}
    return [pair(env, ref, envs[ref], envs[env], host_of(ref), host_of(env),
                 separate=SEPARATE.format(run=report.run.id))
            for env, ref in pairs_of(report)]


def attach(report: RunReport) -> RunReport:
    """`report` with its differences, and each comparison's `differs_in`."""
    report.differences = report_differences(report)
    names = {(p.environment, p.reference): [f.name for f in p.facts]
             for p in report.differences}
    for r in report.results:
        for vs in ([r.vs_baseline] if r.vs_baseline else []) + list(r.vs_others):
            vs.differs_in = names.get((r.environment, vs.reference), [])
    return report
