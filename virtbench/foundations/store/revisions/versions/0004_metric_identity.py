"""What each sample's metric is: samples.base_metric, scope and instance (virtbench/core/metric_id.py),
so that nothing reads a metric's name to know it is a group's instance, spread or fairness.

Older rows get theirs once, here, from their names as a group of instances gave them
(metric_id.identify over each trial's metric names: `X_i2` is instance 2 of X when X is
among them, and so on). A store whose tables were made from a newer schema.py already has
the columns: adding them is skipped; rows without a scope are filled either way.

Revision ID: 0004
Revises: 0003
"""
from collections import defaultdict

import sqlalchemy as sa
from alembic import op

from virtbench.core.metric_id import identify

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

COLUMNS = (("base_metric", sa.String(100)), ("scope", sa.String(20)), ("instance", sa.Integer))


def upgrade() -> None:
    bind = op.get_bind()
    have = {c["name"] for c in sa.inspect(bind).get_columns("samples")}
    for name, type_ in COLUMNS:
        if name not in have:
            op.add_column("samples", sa.Column(name, type_))
    samples = sa.table("samples", sa.column("id"), sa.column("trial_id"), sa.column("metric"),
                       *(sa.column(name) for name, _ in COLUMNS))
    by_trial: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for row in bind.execute(sa.select(samples.c.id, samples.c.trial_id, samples.c.metric)
                            .where(samples.c.scope.is_(None))):
        by_trial[row.trial_id].append((row.id, row.metric))
    updates = []
    for rows in by_trial.values():
        known = identify(metric for _, metric in rows)
        updates += [{"row_id": row_id, "b": known[metric].base, "s": known[metric].scope,
                     "i": known[metric].instance} for row_id, metric in rows]
    if updates:
        bind.execute(samples.update().where(samples.c.id == sa.bindparam("row_id"))
                     .values(base_metric=sa.bindparam("b"), scope=sa.bindparam("s"),
                             instance=sa.bindparam("i")), updates)


def downgrade() -> None:
    with op.batch_alter_table("samples") as batch:
        for name, _ in reversed(COLUMNS):
            batch.drop_column(name)
