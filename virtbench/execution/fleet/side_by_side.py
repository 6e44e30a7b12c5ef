"""A fleet's runs as one run for the report family: every environment labelled
`HOST:LABEL` (`a:native`, `b:native`), so each format shows hosts side by side with the
statistics and verdicts of analyze_run, unchanged. The references: on the first host, its
study's baseline (as its own report); on every other host, the same environment on the first
host (b:native against a:native): host against host, the point of a fleet."""
from __future__ import annotations

from ...results.analysis.references import Reference, References, metric_identity
from ...core.errors import VirtbenchError
from ...core.metric_id import MetricId
from ...foundations.model import HostRun, RunReport, RunWarning
from ...study.design import default_baseline


def split_label(label: str) -> tuple[str, str]:
    host, _, label = label.partition(":")
    return host, label


class HostReferences:
    """References (analysis.references) for a fleet's prefixed labels."""

    def __init__(self, hosts: list[str], baseline: str | None, environments: list[dict]):
        self.first = hosts[0]
        self.labels = {e["label"] for e in environments}
        mine = [e for e in environments if split_label(e["label"])[0] == self.first]
        self.own = References(baseline, mine)

    def for_row(self, env: str, metric: MetricId | str,
                metrics: set[str] | None = None) -> Reference:
        host, label = split_label(env)
        if host == self.first:
            return self.own.for_row(env, metric, metrics)
        ref = f"{self.first}:{label}"
        if ref in self.labels:
            return Reference(ref, metric_identity(metric, metrics).name, "host")
        return Reference(None, None, "none",
                         f"host {self.first} has no {label}: nothing to compare {env} with",
                         f"not on {self.first}")


class FleetView:
    """What analyze_run reads of a Store, for the fleet's runs (each host's latest)."""

    def __init__(self, store, fleet_id: str):
        self.store = store
        self.fleet = store.get_fleet(fleet_id)
        self.runs: dict[str, dict] = {}
        for run in store.fleet_runs(fleet_id):            # oldest first: the latest wins
            self.runs[run["host"]] = run
        self.hosts = [h for h in self.fleet["hosts"] if h in self.runs]
        if not self.hosts:
            raise VirtbenchError(f"fleet {fleet_id} has no run yet; see `virtbench fleet "
                                 f"status {fleet_id}`")
        self.url = store.url

    def references(self, baseline, environments):
        return HostReferences(self.hosts, baseline, environments)

    def _each(self, read, key: str = "environment"):
        out = []
        for host in self.hosts:
            for row in read(self.runs[host]["id"]):
                row = dict(row)
                if row.get(key) is not None:
                    row[key] = f"{host}:{row[key]}"
                out.append(row)
        return out

    # -- what analyze_run reads --------------------------------------------------------
    def get_run(self, run_id=None) -> dict:
        first = self.runs[self.hosts[0]]
        study = dict(first["study"])
        labels = [e["label"] for e in self.store.environments(first["id"])]
        base = default_baseline(study.get("baseline"), labels)
        study["baseline"] = f"{self.hosts[0]}:{base}" if base else None
        runs = [self.runs[h] for h in self.hosts]
        statuses = {r["status"] for r in runs}
        finished = [r["finished"] for r in runs]
        return {"id": self.fleet["id"], "study_name": self.fleet["study_name"], "study": study,
                "seed": first["seed"], "quick": first["quick"],
                "status": statuses.pop() if len(statuses) == 1 else "partial",
                "started": min(r["started"] for r in runs),
                "finished": max(finished) if all(finished) else None,
                "virtbench_version": first["virtbench_version"],
                "host": ", ".join(self.hosts), "fleet": self.fleet["id"]}

    def environments(self, run_id):
        return self._each(self.store.environments, "label")

    def trials(self, run_id, include_warmup=False):
        return self._each(lambda r: self.store.trials(r, include_warmup))

    def samples(self, run_id, include_warmup=False, include_failed=False):
        return self._each(lambda r: self.store.samples(r, include_warmup, include_failed))

    def warnings(self, run_id):
        return self._each(self.store.warnings)

    def profiles(self, run_id):
        return self._each(self.store.profiles)


def analyze_fleet(store, fleet_id: str, threshold_pct: float | None = None,
                  analysis: str | None = None) -> RunReport:
    """The fleet as one analysis (see the module's docstring), with `run` carrying the fleet,
    its hosts and each host's run, and every environment its host. A host against the first
    host compares two runs: no common blocks, so those rows are compared unpaired; the first
    host's rows against its baseline are paired as in its own report."""
    from ...results.analysis import analyze_run
    from ...results.report.words.warning_groups import attach as attach_groups
    view = FleetView(store, fleet_id)
    result = analyze_run(view, fleet_id, threshold_pct=threshold_pct,
                         references=view.references, analysis=analysis)
    result.run.hosts = list(view.hosts)
    result.run.runs = [HostRun(host=h, id=view.runs[h]["id"], status=view.runs[h]["status"])
                       for h in view.hosts]
    missing = [h for h in view.fleet["hosts"] if h not in view.runs]
    if missing:
        result.warnings.append(RunWarning(kind="host_without_run",
                                          message=f"no run yet on {', '.join(missing)} "
                                                  "(see `virtbench fleet status`)"))
    for e in result.environments:
        e.host = split_label(e.label)[0]
    return attach_groups(result)


def host_runs(store, fleet_id: str, host_a: str | None, host_b: str | None) -> tuple[str, str]:
    """The run ids of two hosts of a fleet (default: its first two hosts with a run)."""
    view = FleetView(store, fleet_id)
    if host_a is None and host_b is None:
        if len(view.hosts) < 2:
            raise VirtbenchError(f"fleet {fleet_id} has a run on {', '.join(view.hosts)} "
                                 "only: nothing to compare it with yet")
        host_a, host_b = view.hosts[:2]
    for h in (host_a, host_b):
        if h not in view.runs:
            raise VirtbenchError(f"fleet {fleet_id} has no run on host {h!r}; its hosts with "
                                 f"a run: {', '.join(view.hosts)}")
    return view.runs[host_a]["id"], view.runs[host_b]["id"]
