"""offer feeds: which price feed wrote an offer, when it last saw it and when it went

Revision ID: 20261201_0003
Revises: 20261201_0002
Create Date: 2026-12-01 07:50:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261201_0003"
down_revision: str | None = "20261201_0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("offers", schema=None) as batch_op:
        batch_op.add_column(sa.Column("feed", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("gone_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("offers", schema=None) as batch_op:
        batch_op.drop_column("gone_at")
        batch_op.drop_column("last_seen_at")
        batch_op.drop_column("feed")
