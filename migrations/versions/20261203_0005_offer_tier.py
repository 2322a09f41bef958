"""offer tier: which of a provider's two tiers (community or secure) an offer's price is for

Revision ID: 20261203_0005
Revises: 20261201_0004
Create Date: 2026-12-03 17:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261203_0005"
down_revision: str | None = "20261201_0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("offers", schema=None) as batch_op:
        batch_op.add_column(sa.Column("tier", sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("offers", schema=None) as batch_op:
        batch_op.drop_column("tier")
