"""Fleets: runs.fleet (the fleet run a run belongs to) and the fleets table.

A store that virtbench upgraded without revisions may have them already (stamped 0001 by
virtbench.foundations.store.upgrade): each step is skipped when its column or table exists.

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if "fleet" not in {c["name"] for c in inspector.get_columns("runs")}:
        op.add_column("runs", sa.Column("fleet", sa.String(40)))
    if not inspector.has_table("fleets"):
        op.create_table(
            "fleets",
            sa.Column("id", sa.String(40), primary_key=True),
            sa.Column("study_name", sa.String(200), nullable=False),
            sa.Column("study", sa.JSON, nullable=False),
            sa.Column("hosts", sa.JSON, nullable=False),
            sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        )


def downgrade() -> None:
    op.drop_table("fleets")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("fleet")
