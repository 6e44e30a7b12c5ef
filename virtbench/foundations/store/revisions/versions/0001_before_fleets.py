"""The store before fleets: runs, environments, trials (with warm-ups and boots), superseded
trials, boots, exit profiles, samples, warnings.

Stores made by a virtbench older than revisions are stamped 0001 once their legacy columns
are added (virtbench.foundations.store.upgrade); this creates the same schema from nothing.

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _tz():
    return sa.DateTime(timezone=True)


def _trial_columns():
    """trials' columns after id and run_id (superseded_trials repeats them)."""
    return [
        sa.Column("environment", sa.String(200), nullable=False),
        sa.Column("benchmark", sa.String(200), nullable=False),
        sa.Column("benchmark_name", sa.String(100), nullable=False),
        sa.Column("params", sa.JSON, nullable=False),
        sa.Column("trial", sa.Integer, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("exit", sa.Integer),
        sa.Column("stdout", sa.Text),
        sa.Column("stderr", sa.Text),
        sa.Column("wall_s", sa.Float),
        sa.Column("started", _tz()),
        sa.Column("finished", _tz()),
    ]


def _run_fk():
    return sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id", ondelete="CASCADE"),
                     nullable=False)


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("study_name", sa.String(200), nullable=False),
        sa.Column("study", sa.JSON, nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("quick", sa.Boolean, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("started", _tz(), nullable=False),
        sa.Column("finished", _tz()),
        sa.Column("virtbench_version", sa.String(20)),
        sa.Column("host", sa.String(200)),
    )
    op.create_table(
        "environments",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        _run_fk(),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("spec", sa.String(400), nullable=False),
        sa.Column("options", sa.JSON, nullable=False),
        sa.Column("metadata", sa.JSON),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("boot_s", sa.Float),
        sa.UniqueConstraint("run_id", "label"),
    )
    op.create_table(
        "trials",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        _run_fk(),
        *_trial_columns(),
        sa.Column("warmup", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("boot", sa.Integer),
        sa.UniqueConstraint("run_id", "environment", "benchmark", "trial"),
    )
    op.create_table(
        "superseded_trials",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("trial_id", sa.Integer, nullable=False),
        _run_fk(),
        *[sa.Column(c.name, c.type) for c in _trial_columns()],
        sa.Column("warmup", sa.Boolean),
        sa.Column("boot", sa.Integer),
        sa.Column("superseded", _tz(), nullable=False),
    )
    op.create_table(
        "boots",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        _run_fk(),
        sa.Column("environment", sa.String(200), nullable=False),
        sa.Column("boot", sa.Integer, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("started", _tz(), nullable=False),
        sa.Column("boot_s", sa.Float),
        sa.Column("ended", _tz()),
        sa.Column("lost", sa.Text),
        sa.UniqueConstraint("run_id", "environment", "boot"),
    )
    op.create_table(
        "profiles",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        _run_fk(),
        sa.Column("environment", sa.String(200), nullable=False),
        sa.Column("benchmark", sa.String(200), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("profile", sa.JSON),
        sa.Column("wall_s", sa.Float),
        sa.Column("recorded", _tz(), nullable=False),
        sa.UniqueConstraint("run_id", "environment", "benchmark"),
    )
    op.create_table(
        "samples",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("trial_id", sa.Integer, sa.ForeignKey("trials.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("metric", sa.String(100), nullable=False),
        sa.Column("value", sa.Float, nullable=False),
        sa.Column("unit", sa.String(40), nullable=False),
        sa.Column("higher_is_better", sa.Boolean, nullable=False),
    )
    op.create_table(
        "warnings",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        _run_fk(),
        sa.Column("environment", sa.String(200)),
        sa.Column("benchmark", sa.String(200)),
        sa.Column("metric", sa.String(100)),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("message", sa.Text, nullable=False),
    )


def downgrade() -> None:
    for table in ("warnings", "samples", "profiles", "boots", "superseded_trials", "trials",
                  "environments", "runs"):
        op.drop_table(table)
