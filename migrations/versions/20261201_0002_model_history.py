"""model history: administrative changes of workload models

Revision ID: 20261201_0002
Revises: 0001
Create Date: 2026-12-01 07:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "20261201_0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "model_history",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("model_id", sa.String(length=64), nullable=False),
        sa.Column("change", sa.String(length=16), nullable=False),
        sa.Column("actor", sa.String(length=64), nullable=False),
        sa.Column(
            "record",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_model_history")),
    )
    with op.batch_alter_table("model_history", schema=None) as batch_op:
        batch_op.create_index("ix_model_history_model_recorded", ["model_id", "recorded_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("model_history", schema=None) as batch_op:
        batch_op.drop_index("ix_model_history_model_recorded")
    op.drop_table("model_history")
