"""A metric's identity (benchmark metric, scope, instance) is made with the metric, stored with
each sample, and filled once from the names for rows stored before (revision 0004)."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from runkit import Flaky, Quiet, run_study

from virtbench.measure.environments.base import EnvSpec
from virtbench.measure.environments.group import InstanceGroup
from virtbench.measure.environments.instances import group_metrics
from virtbench.core.metric_id import MetricId, identify
from virtbench.core.outcome import Metric
from virtbench.foundations.store import Sample, Store, TrialRecord
from virtbench.foundations.store.upgrade import REVISIONS_DIR

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "reports"


def test_identify_reads_a_groups_names_and_nothing_else():
    ids = identify(["t", "t_i0", "t_i1", "t_spread_pct", "t_fairness", "x_i0", "rtt_p99_us"])
    assert ids["t"] == MetricId("t", "t", "aggregate")
    assert ids["t_i1"] == MetricId("t_i1", "t", "instance", 1)
    assert ids["t_spread_pct"] == MetricId("t_spread_pct", "t", "spread")
    assert ids["t_fairness"] == MetricId("t_fairness", "t", "fairness")
    # no x among the names: x_i0 is a metric of its own, as is anything else
    assert ids["x_i0"] == MetricId("x_i0", "x_i0", "single")
    assert ids["rtt_p99_us"] == MetricId.single("rtt_p99_us")


def test_a_group_makes_its_metrics_with_their_identity():
    made = {m.name: m.identity for m in group_metrics((Metric("rate", "MB/s", True),), 2)}
    assert made == {"rate": MetricId("rate", "rate", "aggregate"),
                    "rate_spread_pct": MetricId("rate_spread_pct", "rate", "spread"),
                    "rate_fairness": MetricId("rate_fairness", "rate", "fairness"),
                    "rate_i0": MetricId("rate_i0", "rate", "instance", 0),
                    "rate_i1": MetricId("rate_i1", "rate", "instance", 1)}
    assert Metric("rate", "MB/s", True).identity == MetricId.single("rate")


def test_the_runner_stores_the_identity_the_metric_was_made_with(tmp_path, monkeypatch):
    def no_names(names):
        raise AssertionError(f"identified from names: {sorted(names)}")
    monkeypatch.setattr("virtbench.foundations.store.sample.identify", no_names)
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    group = InstanceGroup([Quiet("q"), Quiet("q")], EnvSpec("quiet"))
    out = run_study(store, [group, Quiet("one")], {"flaky": Flaky(fail_on=())}, trials=2)
    got = {(s["environment"], s["metric"]): (s["base_metric"], s["scope"], s["instance"])
           for s in store.samples(out.run_id)}
    assert got[("one", "rate")] == ("rate", "single", None)
    assert got[("q/x2", "rate")] == ("rate", "aggregate", None)
    assert got[("q/x2", "time_i1")] == ("time", "instance", 1)
    assert got[("q/x2", "time_fairness")] == ("time", "fairness", None)
    assert got[("q/x2", "rate_spread_pct")] == ("rate", "spread", None)


def test_samples_given_without_identity_are_identified_by_their_trial(store_url):
    store = Store(store_url)
    run = store.create_run({"name": "t"}, seed=1, quick=True, version="t", host="h")
    store.record_trial(run, TrialRecord(
        environment="g/x2", benchmark="b", benchmark_name="b", params={},
        trial=0, seq=0, status="ok",
        samples=[Sample("t", 2.0, "s", False), Sample("t_i0", 1.0, "s", False),
        Sample("t_i1", 1.0, "s", False), Sample("u", 3.0, "s", False, "single", "u")]))
    got = {s["metric"]: (s["base_metric"], s["scope"], s["instance"])
           for s in store.samples(run)}
    assert got == {"t": ("t", "aggregate", None), "t_i0": ("t", "instance", 0),
                   "t_i1": ("t", "instance", 1), "u": ("u", "single", None)}


def test_revision_0004_fills_the_identity_of_a_saved_real_run(tmp_path):
    path = tmp_path / "real.db"
    con = sqlite3.connect(path)
    con.executescript((FIXTURES / "real-0003.sql").read_text())
    assert "scope" not in {r[1] for r in con.execute("PRAGMA table_info(samples)")}
    con.close()
    store = Store(f"sqlite:///{path}")
    first = store.list_runs()[-1]["id"]
    got = {(s["environment"], s["metric"]): (s["base_metric"], s["scope"], s["instance"])
           for s in store.samples(first)}
    assert got[("native", "triad_mb_s")] == ("triad_mb_s", "single", None)
    assert got[("native/x2", "triad_mb_s")] == ("triad_mb_s", "aggregate", None)
    assert got[("native/x2", "triad_mb_s_i1")] == ("triad_mb_s", "instance", 1)
    assert got[("native/x2", "seconds_spread_pct")] == ("seconds", "spread", None)
    assert got[("native/x2", "seconds_fairness")] == ("seconds", "fairness", None)
    assert got[("container-podman/runc", "seconds")] == ("seconds", "single", None)
    # failed trials' evidence is identified as well
    assert all(s["scope"] for s in store.samples(first, include_failed=True))


def test_revision_0004_upgrades_rows_on_both_databases(store_url):
    engine = sa.create_engine(store_url)
    config = Config()
    config.set_main_option("script_location", str(REVISIONS_DIR))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0003")
        conn.execute(sa.text("INSERT INTO runs (id, study_name, study, seed, quick, status, "
                             "started) VALUES ('r', 'q', '{}', 1, true, 'complete', "
                             "'2026-01-01 00:00:00+00')"))
        conn.execute(sa.text("INSERT INTO trials (id, run_id, environment, benchmark, "
                             "benchmark_name, params, trial, seq, status, warmup) VALUES "
                             "(1, 'r', 'n/x2', 'pi', 'pi', '{}', 0, 0, 'ok', false)"))
        for i, metric in enumerate(("seconds", "seconds_i0", "seconds_i1", "seconds_fairness")):
            conn.execute(sa.text("INSERT INTO samples (id, trial_id, metric, value, unit, "
                                 "higher_is_better) VALUES (:i, 1, :m, 1.0, 's', false)"),
                         {"i": i + 1, "m": metric})
    engine.dispose()
    got = {s["metric"]: (s["base_metric"], s["scope"], s["instance"])
           for s in Store(store_url).samples("r")}
    assert got == {"seconds": ("seconds", "aggregate", None),
                   "seconds_i0": ("seconds", "instance", 0),
                   "seconds_i1": ("seconds", "instance", 1),
                   "seconds_fairness": ("seconds", "fairness", None)}

