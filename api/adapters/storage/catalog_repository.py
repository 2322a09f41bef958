"""Read the catalog from the database into a snapshot, and seed the database from the reference data."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

import msgspec
from sqlalchemy import Table, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from api.adapters.storage.tables import (
    CatalogMetaRow,
    GpuRow,
    ModelRow,
    OfferPriceHistoryRow,
    OfferRow,
    ProviderRow,
    SystemRow,
)
from domain.catalog import Catalog, CatalogError, Gpu, ModelSpec, Offer, Provider, System, decode_records
from domain.catalog.digest import DIGEST_MODULUS, version_of

CATALOG_META_KEY = "catalog"


@dataclass(frozen=True)
class DocumentTable:
    """A catalog table that stores each record whole, plus the typed columns SQL needs."""

    name: str
    row: Any  # a Base subclass with id, record and updated_at columns
    record_type: Any
    columns: Callable[[Any], dict[str, Any]]


# Parents first: offers and systems reference GPUs and providers.
DOCUMENT_TABLES = (
    DocumentTable(
        "gpus",
        GpuRow,
        Gpu,
        lambda g: {"name": g.name, "vendor": g.vendor, "ecosystem": g.ecosystem, "memory_gb": g.memory_gb},
    ),
    DocumentTable("providers", ProviderRow, Provider, lambda p: {"name": p.name}),
    DocumentTable("systems", SystemRow, System, lambda s: {"name": s.name, "gpu_id": s.gpu}),
    DocumentTable("models", ModelRow, ModelSpec, lambda m: {"name": m.name, "kind": record_document(m)["kind"]}),
)


@dataclass
class SeedReport:
    """What a seed run changed, per table."""

    inserted: dict[str, int] = field(default_factory=dict)
    updated: dict[str, int] = field(default_factory=dict)
    removed: dict[str, int] = field(default_factory=dict)
    kept: list[str] = field(default_factory=list)
    version: str = ""

    @property
    def changed(self) -> bool:
        return any(self.inserted.values()) or any(self.updated.values()) or any(self.removed.values())


def record_document(record: Any) -> dict[str, Any]:
    """A record as the JSON document the database stores and gives back (lists, not tuples; ISO dates)."""
    document: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(record))
    return document


def offer_columns(offer: Offer) -> dict[str, Any]:
    """An offer as OfferRow column values."""
    values = msgspec.structs.asdict(offer)
    # What the column gives back (Money keeps 4 decimals), so the row's offer and its digest are the stored ones.
    values["usd_per_gpu_hour"] = round(offer.usd_per_gpu_hour, 4)
    values["provider_id"] = values.pop("provider")
    values["gpu_id"] = values.pop("gpu")
    return values


def offer_from_row(row: Any) -> dict[str, Any]:
    """An OfferRow (or a plain row of its table) as the mapping an Offer decodes from."""
    return {
        "id": row.id,
        "provider": row.provider_id,
        "gpu": row.gpu_id,
        "gpus_per_instance": row.gpus_per_instance,
        "pricing": row.pricing,
        "usd_per_gpu_hour": row.usd_per_gpu_hour,
        "instance": row.instance,
        "vcpus": row.vcpus,
        "ram_gb": row.ram_gb,
        "bare_metal": row.bare_metal,
        "region": row.region,
        "tier": row.tier,
        "as_of": row.as_of,
        "source": row.source,
        "notes": row.notes,
    }


async def load_catalog(session: AsyncSession) -> Catalog | None:
    """The stored catalog, validated like the reference data; None when the database holds none yet."""
    # Rows are read as plain rows (no ORM objects), and decoding and validating them, which takes a large catalog tens
    # of milliseconds, runs in a worker thread so the event loop keeps answering meanwhile.
    documents = {table.name: (await session.scalars(select(table.row.record))).all() for table in DOCUMENT_TABLES}
    # Offers a price feed no longer returns stay in the table (and its history) but are not served.
    offers = (await session.execute(select(OfferRow.__table__).where(OfferRow.gone_at.is_(None)))).all()
    return await asyncio.to_thread(_catalog, documents, offers)


def _catalog(documents: dict[str, Sequence[Any]], offers: Sequence[Any]) -> Catalog | None:
    if not documents["gpus"]:
        return None
    tables = {
        table.name: decode_records(table.name, documents[table.name], table.record_type) for table in DOCUMENT_TABLES
    }
    tables["offers"] = decode_records("offer", (offer_from_row(row) for row in offers), Offer)
    return Catalog(**tables)


async def load_changed_offers(session: AsyncSession, current: Catalog) -> Catalog | None:
    """The stored catalog: `current` with the offers that differ from the stored ones swapped in, or None."""
    # Built as the writing instance builds it; None when more than offers changed (the caller then loads the catalog
    # whole). Only the offer rows are read, and only the changed ones are decoded: a one-offer change elsewhere does not
    # read, decode and validate every table again. The version and the offers are read in one snapshot, so a write
    # committed between the two reads cannot make them disagree (and send the caller to read every table).
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        await session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
    version = await stored_version(session)
    if version is None:
        return None
    if version == current.version:
        return current
    offers = (await session.execute(select(OfferRow.__table__).where(OfferRow.gone_at.is_(None)))).all()
    return await asyncio.to_thread(_swapped, current, offers, version)


def _swapped(current: Catalog, offers: Sequence[Any], version: str) -> Catalog | None:
    known = {offer.id: offer for offer in current.offers}
    changed = [
        document
        for document in (offer_from_row(row) for row in offers)
        if (offer := known.get(document["id"])) is None or msgspec.structs.asdict(offer) != document
    ]
    live = {row.id for row in offers}
    try:
        catalog = current.with_offers(decode_records("offer", changed, Offer), [i for i in known if i not in live])
    except CatalogError:
        return None  # e.g. an offer for a GPU this snapshot does not have yet
    # The content hash covers every table: equal means nothing but these offers changed.
    return catalog if catalog.version == version else None


async def stored_digests(session: AsyncSession) -> tuple[int, int] | None:
    """The structure and offers digests recorded by the last committed change (None before the first)."""
    # A plain select: every instance asks this every poll and every reload, and an ORM get costs several times more.
    row = (
        await session.execute(
            select(CatalogMetaRow.structure_digest, CatalogMetaRow.offers_digest).where(
                CatalogMetaRow.key == CATALOG_META_KEY
            )
        )
    ).first()
    return (row.structure_digest, row.offers_digest) if row else None


async def stored_version(session: AsyncSession) -> str | None:
    """The catalog version recorded by the last committed change."""
    digests = await stored_digests(session)
    return version_of(*digests) if digests else None


async def record_catalog(session: AsyncSession, now: datetime) -> str:
    """Record the digests of the catalog the transaction's changes leave, in it; its version ("" for none)."""
    catalog = await load_catalog(session)
    if catalog is None:
        return ""
    row = await session.get(CatalogMetaRow, CATALOG_META_KEY)
    if row is None:
        session.add(
            CatalogMetaRow(
                key=CATALOG_META_KEY,
                structure_digest=catalog.structure_digest,
                offers_digest=catalog.offers_digest,
                updated_at=now,
            )
        )
    elif (row.structure_digest, row.offers_digest) != (catalog.structure_digest, catalog.offers_digest):
        row.structure_digest, row.offers_digest, row.updated_at = catalog.structure_digest, catalog.offers_digest, now
    return catalog.version


async def add_to_offers_digest(session: AsyncSession, delta: int, now: datetime) -> str | None:
    """Move the stored offers' digest by `delta` and return the new version; None when no digests are stored.

    The one statement every offer writer queues on: the row lock it takes is held only until the commit after it.
    """
    # On the table, not the mapped class: the ORM's bulk-update path costs more than the statement.
    meta = cast("Table", CatalogMetaRow.__table__)
    result = await session.execute(
        update(meta)
        .where(meta.c.key == CATALOG_META_KEY)
        .values(offers_digest=(meta.c.offers_digest + delta) % DIGEST_MODULUS, updated_at=now)
        .returning(meta.c.structure_digest, meta.c.offers_digest)
    )
    row = result.first()
    return version_of(row.structure_digest, row.offers_digest) if row else None


# Seeding and administrative writes from every instance queue on this lock, so each computes the catalog version
# after the one before and two first starts do not both insert the reference data. Offer writers hold it shared:
# they change only their own offers' rows and the offers' digest, and only need the other tables held still.
CATALOG_WRITE_LOCK_ID = 7_351_208_115


async def lock_catalog_writes(session: AsyncSession, *, shared: bool = False) -> None:
    """Serialise catalog writers until the transaction ends (PostgreSQL; SQLite serialises writers itself)."""
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        function = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
        await session.execute(text(f"SELECT {function}(:id)"), {"id": CATALOG_WRITE_LOCK_ID})


async def _last_actors(session: AsyncSession) -> dict[str, str]:
    """Who made the latest change of each offer that has a history."""
    rows = await session.execute(
        select(OfferPriceHistoryRow.offer_id, OfferPriceHistoryRow.actor).order_by(
            OfferPriceHistoryRow.recorded_at, OfferPriceHistoryRow.id
        )
    )
    return {offer_id: actor for offer_id, actor in rows}


def history_row(offer: Offer, **change: Any) -> OfferPriceHistoryRow:
    """The history entry for one change of an offer (`change`: history_values' keywords)."""
    return OfferPriceHistoryRow(**history_values(offer, **change))


def history_values(
    offer: Offer,
    *,
    change: str,
    actor: str,
    previous: float | None,
    now: datetime,
    superseded_by: str | None = None,
) -> dict[str, Any]:
    """The columns of the history entry for one change of an offer."""
    return {
        "offer_id": offer.id,
        "change": change,
        "actor": actor,
        "usd_per_gpu_hour": None if change == "deleted" else offer.usd_per_gpu_hour,
        "previous_usd_per_gpu_hour": previous,
        "pricing": offer.pricing,
        "tier": offer.tier,
        "as_of": offer.as_of,
        "source": offer.source,
        "superseded_by": superseded_by,
        "recorded_at": now,
    }


def _keep_feed_state(table: str, stored: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    """A provider's feed and last sync are the feed's to set, not the reference data's."""
    if table != "providers":
        return document
    return document | {key: stored[key] for key in ("feed", "last_synced_at") if stored.get(key) is not None}


async def seed_catalog(session: AsyncSession, reference: Catalog, *, actor: str = "seed") -> SeedReport:
    """Bring the database up to the reference data; a second run changes nothing."""
    # What administrators did is kept: an offer they deleted is not put back, and their price stays unless the reference
    # price is dated later.
    await lock_catalog_writes(session)
    now = datetime.now(UTC)
    report = SeedReport()
    for table in DOCUMENT_TABLES:
        existing = {row.id: row for row in (await session.scalars(select(table.row))).all()}
        inserted = updated = 0
        for record in getattr(reference, table.name):
            document = record_document(record)
            row = existing.get(record.id)
            if row is None:
                session.add(table.row(id=record.id, record=document, updated_at=now, **table.columns(record)))
                inserted += 1
            elif row.record != (document := _keep_feed_state(table.name, row.record, document)):
                for column, value in table.columns(record).items():
                    setattr(row, column, value)
                row.record, row.updated_at = document, now
                updated += 1
        report.inserted[table.name], report.updated[table.name] = inserted, updated
        await session.flush()

    stored_offers = {row.id: row for row in (await session.scalars(select(OfferRow))).all()}
    last_actor = await _last_actors(session)
    inserted = updated = 0
    for offer in reference.offers:
        columns = offer_columns(offer)
        row = stored_offers.get(offer.id)
        administered = last_actor.get(offer.id, actor) != actor
        if row is None:
            if offer.id in last_actor:
                # Deleted since it was seeded: an administrator's decision, not a gap to fill.
                report.kept.append(offer.id)
                continue
            session.add(OfferRow(**columns, updated_at=now))
            session.add(history_row(offer, change="created", actor=actor, previous=None, now=now))
            inserted += 1
            continue
        if offer_from_row(row) == msgspec.structs.asdict(offer):
            continue
        if administered and row.as_of >= offer.as_of:
            report.kept.append(offer.id)
            continue
        previous = row.usd_per_gpu_hour
        for column, value in columns.items():
            setattr(row, column, value)
        row.updated_at = now
        session.add(history_row(offer, change="updated", actor=actor, previous=previous, now=now))
        updated += 1
    # An offer the reference no longer ships is removed when only the seed ever wrote it (its source could not be
    # traced); one an administrator or a feed changed since is theirs and stays.
    shipped = {offer.id for offer in reference.offers}
    removed = 0
    for offer_id, row in stored_offers.items():
        if offer_id in shipped or last_actor.get(offer_id, actor) != actor:
            continue
        gone = msgspec.convert(offer_from_row(row), Offer)
        session.add(history_row(gone, change="deleted", actor=actor, previous=row.usd_per_gpu_hour, now=now))
        await session.delete(row)
        removed += 1
    report.inserted["offers"], report.updated["offers"] = inserted, updated
    report.removed["offers"] = removed
    await session.flush()

    report.version = await record_catalog(session, now)
    return report
