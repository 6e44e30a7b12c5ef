"""The store's tables at the head revision (virtbench/foundations/store/revisions/versions holds how a
store gets here from any older one; a change here needs a new revision there)."""
from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

runs = sa.Table(
    "runs", metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("study_name", sa.String(200), nullable=False),
    sa.Column("study", sa.JSON, nullable=False),          # the resolved study, for --resume
    sa.Column("seed", sa.BigInteger, nullable=False),
    sa.Column("quick", sa.Boolean, nullable=False),
    sa.Column("status", sa.String(20), nullable=False),   # running, complete, interrupted
    sa.Column("started", sa.DateTime(timezone=True), nullable=False),
    sa.Column("finished", sa.DateTime(timezone=True)),
    sa.Column("virtbench_version", sa.String(20)),
    sa.Column("host", sa.String(200)),
    sa.Column("fleet", sa.String(40)),                    # the fleet run it belongs to, if any
    # what the run says about itself beyond its study (revision 0005): the calibrated loop
    # counts of its benchmarks, how adaptive trials ended, duet pairing; see docs/store.md
    sa.Column("detail", sa.JSON),
    # the named series the run was tagged into (`run --series NAME`, revision 0006), for
    # `virtbench history --series NAME`; null: none
    sa.Column("series", sa.String(100)),
)

# a fleet run (`virtbench fleet run`): one study enqueued for several hosts; each host's
# run is a row of runs with runs.fleet = fleets.id and runs.host = the worker's name
fleets = sa.Table(
    "fleets", metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("study_name", sa.String(200), nullable=False),
    sa.Column("study", sa.JSON, nullable=False),          # the resolved study every host runs
    sa.Column("hosts", sa.JSON, nullable=False),          # the host names, in the order given
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
)

environments = sa.Table(
    "environments", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    sa.Column("label", sa.String(200), nullable=False),
    sa.Column("kind", sa.String(40), nullable=False),
    sa.Column("spec", sa.String(400), nullable=False),
    sa.Column("options", sa.JSON, nullable=False),
    sa.Column("metadata", sa.JSON),
    sa.Column("status", sa.String(20), nullable=False),   # planned, up, failed, skipped
    sa.Column("error", sa.Text),
    sa.Column("boot_s", sa.Float),
    sa.UniqueConstraint("run_id", "label"),
)

trials = sa.Table(
    "trials", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    sa.Column("environment", sa.String(200), nullable=False),
    sa.Column("benchmark", sa.String(200), nullable=False),     # the case label
    sa.Column("benchmark_name", sa.String(100), nullable=False),
    sa.Column("params", sa.JSON, nullable=False),
    sa.Column("trial", sa.Integer, nullable=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("status", sa.String(20), nullable=False),         # ok, failed
    sa.Column("error", sa.Text),
    sa.Column("exit", sa.Integer),
    # a successful trial's whole output; a failed trial's last OUTPUT_TAIL_BYTES of each
    # (detail.stdout_bytes / stderr_bytes: the whole size when it was cut)
    sa.Column("stdout", sa.Text),
    sa.Column("stderr", sa.Text),
    sa.Column("wall_s", sa.Float),
    sa.Column("started", sa.DateTime(timezone=True)),
    sa.Column("finished", sa.DateTime(timezone=True)),
    # warm-up trials have trial numbers -1, -2, ... and warmup true; never in the statistics
    sa.Column("warmup", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("boot", sa.Integer),          # which boot of the environment served it
    # what else the trial says about itself (revision 0003): output sizes before the tail was
    # kept, a group's aggregate method and clock mapping; see docs/store.md
    sa.Column("detail", sa.JSON),
    sa.UniqueConstraint("run_id", "environment", "benchmark", "trial"),
)

# failed trials that `--resume --retry-failed` ran again: kept, never in the statistics
superseded_trials = sa.Table(
    "superseded_trials", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("trial_id", sa.Integer, nullable=False),        # its id in trials, then
    sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    *[sa.Column(c.name, c.type) for c in trials.columns
      if c.name not in ("id", "run_id")],
    sa.Column("superseded", sa.DateTime(timezone=True), nullable=False),
)

# every start of an environment in a run: the first, and each restart after a lost guest
boots = sa.Table(
    "boots", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    sa.Column("environment", sa.String(200), nullable=False),
    sa.Column("boot", sa.Integer, nullable=False),            # 1, 2, ... within the run
    sa.Column("reason", sa.Text, nullable=False),             # first start / restart after ...
    sa.Column("started", sa.DateTime(timezone=True), nullable=False),
    sa.Column("boot_s", sa.Float),
    sa.Column("ended", sa.DateTime(timezone=True)),
    sa.Column("lost", sa.Text),                               # why it ended, when it was lost
    sa.UniqueConstraint("run_id", "environment", "boot"),
)

# exit profiles (--profile exits): one profiled trial per environment x benchmark, never one
# of the measured trials; the profile as virtbench.machinery.exits.exit_profile.ExitProfile.to_json() gives it
profiles = sa.Table(
    "profiles", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    sa.Column("environment", sa.String(200), nullable=False),
    sa.Column("benchmark", sa.String(200), nullable=False),
    sa.Column("status", sa.String(20), nullable=False),      # ok, failed
    sa.Column("error", sa.Text),
    sa.Column("profile", sa.JSON),
    sa.Column("wall_s", sa.Float),                            # the profiled trial's own time
    sa.Column("recorded", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("run_id", "environment", "benchmark"),
)

# a trial's values: a successful trial's are its results; a failed trial's (trials.status
# "failed") are what it measured before it failed, evidence kept beside it, never statistics
samples = sa.Table(
    "samples", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("trial_id", sa.Integer, sa.ForeignKey("trials.id", ondelete="CASCADE"), nullable=False),
    sa.Column("metric", sa.String(100), nullable=False),
    sa.Column("value", sa.Float, nullable=False),
    sa.Column("unit", sa.String(40), nullable=False),
    sa.Column("higher_is_better", sa.Boolean, nullable=False),
    # what the metric is (revision 0004; virtbench/core/metric_id.py): the benchmark's metric it
    # is of, its scope (single, aggregate, instance, spread, fairness) and an instance's index;
    # every row has base_metric and scope (0004 filled the older rows from their names)
    sa.Column("base_metric", sa.String(100)),
    sa.Column("scope", sa.String(20)),
    sa.Column("instance", sa.Integer),
)

warnings = sa.Table(
    "warnings", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    sa.Column("environment", sa.String(200)),
    sa.Column("benchmark", sa.String(200)),
    sa.Column("metric", sa.String(100)),
    sa.Column("kind", sa.String(40), nullable=False),
    sa.Column("message", sa.Text, nullable=False),
)
