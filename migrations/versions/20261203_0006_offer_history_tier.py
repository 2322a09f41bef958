"""offer history tier: each history row keeps the offer's tier, and a curated offer a feed superseded names the feed
offer that replaced it

Revision ID: 20261203_0006
Revises: 20261203_0005
Create Date: 2026-12-03 17:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261203_0006"
down_revision: str | None = "20261203_0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("offer_price_history", schema=None) as batch_op:
        batch_op.add_column(sa.Column("tier", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("superseded_by", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("offer_price_history", schema=None) as batch_op:
        batch_op.drop_column("superseded_by")
        batch_op.drop_column("tier")
