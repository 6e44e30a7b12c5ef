"""Failed trials keep their evidence: trials.detail (and superseded_trials.detail), a JSON
object per trial (output sizes before a failed trial's tail was kept, a group's aggregate
method and clock mapping).

A store whose tables were made from a newer schema.py already has the columns: each step is
skipped when its column exists.

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

TABLES = ("trials", "superseded_trials")


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    for table in TABLES:
        if "detail" not in {c["name"] for c in inspector.get_columns(table)}:
            op.add_column(table, sa.Column("detail", sa.JSON))


def downgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("detail")
