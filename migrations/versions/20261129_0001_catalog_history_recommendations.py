"""catalog, price history and saved recommendations

Revision ID: 0001
Revises:
Create Date: 2026-11-29 19:13:23.013980
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "catalog_meta",
        sa.Column("key", sa.String(length=32), nullable=False),
        sa.Column("version", sa.String(length=64), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_catalog_meta")),
    )
    op.create_table(
        "gpus",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("vendor", sa.String(length=16), nullable=False),
        sa.Column("ecosystem", sa.String(length=16), nullable=False),
        sa.Column("memory_gb", sa.Float(), nullable=False),
        sa.Column(
            "record",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_gpus")),
    )
    with op.batch_alter_table("gpus", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_gpus_vendor"), ["vendor"], unique=False)

    op.create_table(
        "models",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column(
            "record",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_models")),
    )
    op.create_table(
        "offer_price_history",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("offer_id", sa.String(length=64), nullable=False),
        sa.Column("change", sa.String(length=16), nullable=False),
        sa.Column("actor", sa.String(length=64), nullable=False),
        sa.Column("usd_per_gpu_hour", sa.Numeric(precision=12, scale=4, asdecimal=False), nullable=True),
        sa.Column("previous_usd_per_gpu_hour", sa.Numeric(precision=12, scale=4, asdecimal=False), nullable=True),
        sa.Column("pricing", sa.String(length=32), nullable=False),
        sa.Column("as_of", sa.Date(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_offer_price_history")),
    )
    with op.batch_alter_table("offer_price_history", schema=None) as batch_op:
        batch_op.create_index("ix_offer_price_history_offer_recorded", ["offer_id", "recorded_at"], unique=False)

    op.create_table(
        "providers",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column(
            "record",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_providers")),
    )
    op.create_table(
        "saved_recommendations",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("catalog_version", sa.String(length=64), nullable=False),
        sa.Column(
            "request",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "response",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_saved_recommendations")),
    )
    with op.batch_alter_table("saved_recommendations", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_saved_recommendations_catalog_version"), ["catalog_version"], unique=False)

    op.create_table(
        "offers",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("provider_id", sa.String(length=64), nullable=False),
        sa.Column("gpu_id", sa.String(length=64), nullable=False),
        sa.Column("gpus_per_instance", sa.Integer(), nullable=False),
        sa.Column("pricing", sa.String(length=32), nullable=False),
        sa.Column("usd_per_gpu_hour", sa.Numeric(precision=12, scale=4, asdecimal=False), nullable=False),
        sa.Column("instance", sa.String(length=120), nullable=True),
        sa.Column("vcpus", sa.Integer(), nullable=True),
        sa.Column("ram_gb", sa.Float(), nullable=True),
        sa.Column("bare_metal", sa.Boolean(), nullable=True),
        sa.Column("region", sa.String(length=120), nullable=True),
        sa.Column("as_of", sa.Date(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["gpu_id"], ["gpus.id"], name=op.f("fk_offers_gpu_id_gpus"), ondelete="RESTRICT"),
        sa.ForeignKeyConstraint(
            ["provider_id"],
            ["providers.id"],
            name=op.f("fk_offers_provider_id_providers"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_offers")),
    )
    with op.batch_alter_table("offers", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_offers_gpu_id"), ["gpu_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_offers_provider_id"), ["provider_id"], unique=False)

    op.create_table(
        "systems",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("gpu_id", sa.String(length=64), nullable=False),
        sa.Column(
            "record",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["gpu_id"], ["gpus.id"], name=op.f("fk_systems_gpu_id_gpus"), ondelete="RESTRICT"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_systems")),
    )
    with op.batch_alter_table("systems", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_systems_gpu_id"), ["gpu_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("systems", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_systems_gpu_id"))

    op.drop_table("systems")
    with op.batch_alter_table("offers", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_offers_provider_id"))
        batch_op.drop_index(batch_op.f("ix_offers_gpu_id"))

    op.drop_table("offers")
    with op.batch_alter_table("saved_recommendations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_saved_recommendations_catalog_version"))

    op.drop_table("saved_recommendations")
    op.drop_table("providers")
    with op.batch_alter_table("offer_price_history", schema=None) as batch_op:
        batch_op.drop_index("ix_offer_price_history_offer_recorded")

    op.drop_table("offer_price_history")
    op.drop_table("models")
    with op.batch_alter_table("gpus", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_gpus_vendor"))

    op.drop_table("gpus")
    op.drop_table("catalog_meta")
