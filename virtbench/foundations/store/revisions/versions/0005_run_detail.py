"""What a run says about itself beyond its study: runs.detail, a JSON object (the loop count
each benchmark's measured section was calibrated to, so that --resume repeats it the same;
how adaptive trials ended: why they stopped and the blocks each case got; duet mode's
pairing). See docs/store.md.

A store whose tables were made from a newer schema.py already has the column: skipped then.

Revision ID: 0005
Revises: 0004
"""
import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if "detail" not in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("runs")}:
        op.add_column("runs", sa.Column("detail", sa.JSON))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("detail")
