"""catalog digests: the catalog version is stored as two digests whose sum it is, so an offer writer can move it
by its own offers' difference without holding every table still

Revision ID: 20261204_0007
Revises: 20261203_0006
Create Date: 2026-12-04 00:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261204_0007"
down_revision: str | None = "20261203_0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # The row is derived data: the next seed (every start with migrations) or catalog write records it again.
    op.execute("DELETE FROM catalog_meta")
    with op.batch_alter_table("catalog_meta", schema=None) as batch_op:
        batch_op.drop_column("version")
        batch_op.add_column(sa.Column("structure_digest", sa.BigInteger(), nullable=False))
        batch_op.add_column(sa.Column("offers_digest", sa.BigInteger(), nullable=False))


def downgrade() -> None:
    op.execute("DELETE FROM catalog_meta")
    with op.batch_alter_table("catalog_meta", schema=None) as batch_op:
        batch_op.drop_column("offers_digest")
        batch_op.drop_column("structure_digest")
        batch_op.add_column(sa.Column("version", sa.String(length=64), nullable=False))
