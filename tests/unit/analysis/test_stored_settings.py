"""A stored run keeps its own settings (issue 38): the runner stores every setting the
analysis reads, so a default changed in core/defaults.py leaves a stored run's report as it
was; a run stored before a setting was stored reads it from core/defaults.py (documented in
docs/store.md). The study is frozen once resolved: the plan holds the resolved baseline."""
from __future__ import annotations

import io
import re
import sqlite3
from dataclasses import FrozenInstanceError

import pytest
from rich.console import Console
from runkit import Quiet, one_study

from virtbench.results import report
from virtbench.results.analysis import analyze_run
from virtbench.measure.benchmarks.base import Benchmark, Metric, TrialOutcome
from virtbench.core import defaults
from virtbench.measure.environments.base import EnvSpec
from virtbench.execution.run.runner import Prepared, Runner
from virtbench.foundations.store import DamagedRow, Store
from virtbench.study.design import EnvironmentEntry, Study

SPEED = {"native": 100.0, "guest": 92.0}
# every default the analysis of a stored run could read, changed
CHANGED = {"THRESHOLD_PCT": 25.0, "ALPHA": 0.2, "ANALYSIS": "unpaired", "CORRECTION": "bh",
           "TRIALS": 30, "MIN_TRIALS": 9, "MAX_TRIALS": 99, "MIN_SECTION_S": 2.0,
           "WARMUP": 3, "PIN": "auto", "STEAL_LIMIT_PCT": 50.0, "CPU_SHARE_LIMIT": 0.1}


class Steady(Benchmark):
    name = "steady"
    family = "test"
    metrics = (Metric("rate", "MB/s", True),)

    def __init__(self):
        self.calls = 0

    def run_trial(self, env, params):
        self.calls += 1
        noise = 1 + 0.01 * ((self.calls * 7) % 5 - 2)
        return TrialOutcome(values={"rate": SPEED[env.label] * noise}, exit=0, stdout="")


def stored_run(store: Store) -> str:
    """A run as the runner stores it (fake environments: nothing runs)."""
    envs = {label: Quiet(label) for label in SPEED}
    for label, env in envs.items():
        env.spec = EnvSpec(label)
    study = one_study(name="kept", trials=6, seed=5, cases=[("steady", "steady")],
                      environments=[EnvironmentEntry(label) for label in SPEED])
    prepared = Prepared(study, envs, {"steady": (Steady(), {})}, "native")
    return Runner(store, console=Console(file=io.StringIO()),
                  show_progress=False).start(prepared).run_id


def json_report(store: Store, run_id: str) -> str:
    return report.render(analyze_run(store, run_id), "json")


def test_a_changed_default_leaves_a_stored_runs_report_unchanged(tmp_path, monkeypatch):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    run_id = stored_run(store)
    before = json_report(store, run_id)
    for name, value in CHANGED.items():
        monkeypatch.setattr(defaults, name, value)
    assert json_report(store, run_id) == before


def test_a_run_stored_without_a_setting_reads_core_defaults(tmp_path, monkeypatch):
    """The fallback is core/defaults.py's, read when the run is read: the control that the
    test above changes what the analysis would read."""
    path = tmp_path / "s.db"
    store = Store(f"sqlite:///{path}")
    run_id = stored_run(store)
    store.engine.dispose()
    con = sqlite3.connect(path)
    with con:
        con.execute("UPDATE runs SET study = json_remove(study, '$.threshold_pct', '$.alpha', "
                    "'$.correction') WHERE id = ?", (run_id,))
    con.close()
    assert analyze_run(store, run_id).run.threshold_pct == 10.0
    for name, value in CHANGED.items():
        monkeypatch.setattr(defaults, name, value)
    info = analyze_run(store, run_id).run
    assert (info.threshold_pct, info.alpha, info.correction) == (25.0, 0.2, "bh")


def test_the_runner_stores_every_setting_and_the_resolved_baseline(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    stored = store.get_run(stored_run(store))["study"]
    assert stored["baseline"] == "native" and stored["seed"] == 5
    for key in ("threshold_pct", "alpha", "analysis", "correction", "trials", "min_trials",
                "max_trials", "min_section_s", "warmup", "pin", "adaptive"):
        assert key in stored, key


def test_a_resolved_study_is_frozen_and_the_plan_holds_its_baseline():
    from virtbench.execution.run.runner import prepare
    from virtbench.study.flags import StudyFlags, with_flags
    study = with_flags(None, StudyFlags(env=["native:name=a", "native:name=b"], bench=["pi"]))
    prepared = prepare(study, dry_run=True)
    assert prepared.baseline == "a" and study.baseline is None      # the first of two
    with pytest.raises(FrozenInstanceError):
        study.baseline = "b"
    run_study = prepared.for_run(seed=3).study
    assert (run_study.baseline, run_study.seed) == ("a", 3) and study.seed is None


def test_a_stored_study_is_checked_as_a_study_file_is():
    ok = Study.from_dict({"name": "s", "trials": "auto", "min_trials": 8})
    assert ok.adaptive and ok.trials == 8 and ok.threshold_pct == defaults.THRESHOLD_PCT
    for bad, words in [({"alpha": 0.9}, "alpha 0.9 is out of range"),
                       ({"trials": 0}, "trials must be greater than or equal to 1"),
                       ({"quick": "yes"}, "quick must be true or false, not 'yes'"),
                       ({"min_trials": 9, "max_trials": 8}, "max_trials 8 is below min_trials 9"),
                       ({"environments": [{"spec": 5}]}, "environments[1].spec must be a string"),
                       ({"published": [{"environment": "native"}]},
                        "published[1].benchmark is missing")]:
        with pytest.raises(DamagedRow, match=re.escape(words)) as caught:
            Study.from_dict({"name": "s", **bad}, "r1")
        assert str(caught.value).startswith("run r1: its stored study is damaged: ")
