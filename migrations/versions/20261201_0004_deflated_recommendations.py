"""deflated recommendations: saved answers are stored as deflated JSON bytes, not as a JSON/JSONB document

Revision ID: 20261201_0004
Revises: 20261201_0003
Create Date: 2026-12-01 12:40:00
"""

import zlib
from collections.abc import Callable, Sequence
from typing import Any

import msgspec
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "20261201_0004"
down_revision: str | None = "20261201_0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DOCUMENT = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
# Rows converted per round trip: bounded memory on a large table.
BATCH = 500


def upgrade() -> None:
    _convert(DOCUMENT, sa.LargeBinary(), lambda document: zlib.compress(msgspec.json.encode(document), 1))


def downgrade() -> None:
    _convert(sa.LargeBinary(), DOCUMENT, lambda stored: msgspec.json.decode(zlib.decompress(stored)))


def _convert(old_type: Any, new_type: Any, convert: Callable[[Any], Any]) -> None:
    """Replace `response` by a column of `new_type`, each value converted, keeping the column's name and NOT NULL."""
    with op.batch_alter_table("saved_recommendations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("response_converted", new_type, nullable=True))
    table = sa.table(
        "saved_recommendations",
        sa.column("id", sa.String),
        sa.column("response", old_type),
        sa.column("response_converted", new_type),
    )
    bind = op.get_bind()
    last = ""
    while True:
        # Keyset pages by id: each page is read once, whatever the table's size.
        page = bind.execute(
            sa.select(table.c.id, table.c.response).where(table.c.id > last).order_by(table.c.id).limit(BATCH)
        ).all()
        if not page:
            break
        bind.execute(
            table.update().where(table.c.id == sa.bindparam("row_id")).values(response_converted=sa.bindparam("value")),
            [{"row_id": row_id, "value": convert(value)} for row_id, value in page],
        )
        last = page[-1][0]
    with op.batch_alter_table("saved_recommendations", schema=None) as batch_op:
        batch_op.drop_column("response")
        batch_op.alter_column("response_converted", new_column_name="response", existing_type=new_type, nullable=False)
