"""SQLAlchemy tables: the catalog (source of truth for every instance), price history and saved recommendations."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    Numeric,
    String,
    Text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator


class UtcDateTime(TypeDecorator[datetime]):
    """Timestamps in UTC on both dialects: SQLite stores no zone, so one is put back on the way out."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


Document = JSON().with_variant(JSONB(), "postgresql")
Money = Numeric(12, 4, asdecimal=False)


class Base(DeclarativeBase):
    """Declarative base with the naming convention Alembic needs to name constraints on both dialects."""

    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: Document}


Base.metadata.naming_convention = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class GpuRow(Base):
    """A GPU: typed columns for what SQL filters on, the full sourced record as a document."""

    __tablename__ = "gpus"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    vendor: Mapped[str] = mapped_column(String(16), index=True)
    ecosystem: Mapped[str] = mapped_column(String(16))
    memory_gb: Mapped[float] = mapped_column(Float)
    record: Mapped[dict[str, Any]]
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())


class SystemRow(Base):
    """An 8-accelerator server."""

    __tablename__ = "systems"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    gpu_id: Mapped[str] = mapped_column(ForeignKey("gpus.id", ondelete="RESTRICT"), index=True)
    record: Mapped[dict[str, Any]]
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())


class ProviderRow(Base):
    """A company renting GPUs."""

    __tablename__ = "providers"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    record: Mapped[dict[str, Any]]
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())


class ModelRow(Base):
    """A workload model (LLM or diffusion pipeline)."""

    __tablename__ = "models"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(200))
    record: Mapped[dict[str, Any]]
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())


class OfferRow(Base):
    """A rentable configuration; fully typed because prices are what administrators change."""

    __tablename__ = "offers"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    provider_id: Mapped[str] = mapped_column(ForeignKey("providers.id", ondelete="RESTRICT"), index=True)
    gpu_id: Mapped[str] = mapped_column(ForeignKey("gpus.id", ondelete="RESTRICT"), index=True)
    gpus_per_instance: Mapped[int] = mapped_column(Integer)
    pricing: Mapped[str] = mapped_column(String(32))
    usd_per_gpu_hour: Mapped[float] = mapped_column(Money)
    instance: Mapped[str | None] = mapped_column(String(120))
    vcpus: Mapped[int | None] = mapped_column(Integer)
    ram_gb: Mapped[float | None] = mapped_column(Float)
    bare_metal: Mapped[bool | None]
    region: Mapped[str | None] = mapped_column(String(120))
    tier: Mapped[str | None] = mapped_column(String(16))
    as_of: Mapped[date] = mapped_column(Date)
    source: Mapped[str] = mapped_column(Text)
    notes: Mapped[str] = mapped_column(Text, default="")
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())
    # Offers a price feed writes: which feed, when it last returned them, and when it stopped (gone offers are kept
    # with their history but no longer served).
    feed: Mapped[str | None] = mapped_column(String(32))
    last_seen_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    gone_at: Mapped[datetime | None] = mapped_column(UtcDateTime())


class OfferPriceHistoryRow(Base):
    """One change of an offer's price; kept when the offer is deleted, so no foreign key."""

    __tablename__ = "offer_price_history"
    __table_args__ = (Index("ix_offer_price_history_offer_recorded", "offer_id", "recorded_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    offer_id: Mapped[str] = mapped_column(String(64))
    change: Mapped[str] = mapped_column(String(16))
    actor: Mapped[str] = mapped_column(String(64))
    usd_per_gpu_hour: Mapped[float | None] = mapped_column(Money)
    previous_usd_per_gpu_hour: Mapped[float | None] = mapped_column(Money)
    pricing: Mapped[str] = mapped_column(String(32))
    tier: Mapped[str | None] = mapped_column(String(16))
    as_of: Mapped[date] = mapped_column(Date)
    source: Mapped[str] = mapped_column(Text)
    # A curated offer a feed's offer of the same identity replaced: the feed offer's id.
    superseded_by: Mapped[str | None] = mapped_column(String(64))
    recorded_at: Mapped[datetime] = mapped_column(UtcDateTime())


class ModelHistoryRow(Base):
    """One administrative change of a workload model: the record as written, who wrote it and when."""

    __tablename__ = "model_history"
    __table_args__ = (Index("ix_model_history_model_recorded", "model_id", "recorded_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    model_id: Mapped[str] = mapped_column(String(64))
    change: Mapped[str] = mapped_column(String(16))
    actor: Mapped[str] = mapped_column(String(64))
    record: Mapped[dict[str, Any]]
    recorded_at: Mapped[datetime] = mapped_column(UtcDateTime())


class CatalogMetaRow(Base):
    """The two digests whose sum is the catalog version every instance compares with its in-memory snapshot."""

    __tablename__ = "catalog_meta"

    key: Mapped[str] = mapped_column(String(32), primary_key=True)
    # Set by writers that hold every table still (seeding, models, price feeds).
    structure_digest: Mapped[int] = mapped_column(BigInteger)
    # Moved by each offer writer by the difference its own offers make (domain/catalog/digest.py).
    offers_digest: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())


class SavedRecommendationRow(Base):
    """A recommendation under its content-addressed id, so any instance can serve it after restarts."""

    __tablename__ = "saved_recommendations"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    catalog_version: Mapped[str] = mapped_column(String(64), index=True)
    request: Mapped[dict[str, Any]]
    # The answer as sent, deflated (recommendation_repository.py): ~6 kB instead of ~40 kB of JSON that PostgreSQL
    # would parse into JSONB and compress again on every write, and byte-exact, which JSONB is not.
    response: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
