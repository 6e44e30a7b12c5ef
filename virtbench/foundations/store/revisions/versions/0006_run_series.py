"""A run can be tagged into a named series (`virtbench run --series NAME`): runs.series, the
name, for `virtbench history --series NAME`; null for every run stored before.

A store whose tables were made from a newer schema.py already has the column: skipped then.

Revision ID: 0006
Revises: 0005
"""
import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if "series" not in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("runs")}:
        op.add_column("runs", sa.Column("series", sa.String(100)))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("series")
