"""Price administration: create, update and delete offers with a history row each, in one transaction."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

import msgspec
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from api.adapters.storage.catalog_repository import (
    history_row,
    load_catalog,
    load_changed_offers,
    lock_catalog_writes,
    offer_columns,
    offer_from_row,
    record_version,
    with_offers,
)
from api.adapters.storage.tables import OfferPriceHistoryRow, OfferRow
from domain.catalog import Catalog, Offer

H = TypeVar("H")


@dataclass
class WriteReport:
    """What one administrative change did."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    version: str = ""
    # The catalog as committed, for the writing instance to serve without reading it back.
    catalog: Catalog | None = None

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated or self.deleted)


async def write_offers(
    session: AsyncSession,
    upserts: Sequence[Offer],
    deletes: Sequence[str],
    *,
    actor: str,
    current: Catalog | None = None,
) -> WriteReport:
    """Apply every change or none: the caller's transaction commits them together with the new catalog version.

    `current` is the caller's snapshot: when it is the stored version (checked under the write lock) the new
    catalog is that snapshot with the changed offers swapped, without reading every table back.
    Raises CatalogError when the catalog that would result is invalid (the transaction must then be rolled back).
    """
    return (await write_offer_batch(session, [OfferChange(upserts, deletes, actor)], current=current))[0]


@dataclass(frozen=True)
class OfferChange:
    """One client's change: offers to create or replace, ids to delete, and who asked."""

    upserts: Sequence[Offer]
    deletes: Sequence[str]
    actor: str


async def write_offer_batch(
    session: AsyncSession, changes: Sequence[OfferChange], *, current: Catalog | None = None
) -> list[WriteReport]:
    """Apply several clients' changes, in order, under one write lock and one new catalog version.

    Each change gets its own report (a later one sees what an earlier one wrote); all share the version. The
    catalog is computed once for the lot: the global lock is taken once per batch, not once per client.
    """
    await lock_catalog_writes(session)
    # Before any change is flushed: `current` brought up to the stored version when only offers differ (another
    # instance's writes), so even a stale snapshot spares reading and validating every table.
    base = await load_changed_offers(session, current) if current is not None else None
    now = datetime.now(UTC)
    ids = [offer.id for change in changes for offer in change.upserts] + [i for c in changes for i in c.deletes]
    stored = {row.id: row for row in (await session.scalars(select(OfferRow).where(OfferRow.id.in_(ids)))).all()}
    reports = [await _apply(session, stored, change, now) for change in changes]
    await session.flush()
    if any(report.changed for report in reports):
        written = {offer.id: offer for change in changes for offer in change.upserts}
        kept = [written[offer_id] for offer_id in written if offer_id in stored]
        gone = [offer_id for report in reports for offer_id in report.deleted if offer_id not in stored]
        catalog: Catalog | None = (
            await asyncio.to_thread(with_offers, base, kept, gone) if base is not None else await load_catalog(session)
        )
        version = catalog.version if catalog else ""
        await record_version(session, version, now)
        for report in reports:
            report.version, report.catalog = version, catalog
    return reports


async def _apply(session: AsyncSession, stored: dict[str, OfferRow], change: OfferChange, now: datetime) -> WriteReport:
    """One change on the rows (`stored` is kept current for the changes after it)."""
    report = WriteReport()
    for offer in change.upserts:
        row = stored.get(offer.id)
        if row is None:
            row = OfferRow(**offer_columns(offer), updated_at=now)
            session.add(row)
            stored[offer.id] = row
            session.add(history_row(offer, change="created", actor=change.actor, previous=None, now=now))
            report.created.append(offer.id)
            continue
        if offer_from_row(row) == msgspec.structs.asdict(offer):
            report.unchanged.append(offer.id)
            continue
        previous = row.usd_per_gpu_hour
        for column, value in offer_columns(offer).items():
            setattr(row, column, value)
        row.updated_at = now
        session.add(history_row(offer, change="updated", actor=change.actor, previous=previous, now=now))
        report.updated.append(offer.id)
    for offer_id in change.deletes:
        stored_row = stored.pop(offer_id, None)
        if stored_row is None:
            continue
        gone = msgspec.convert(offer_from_row(stored_row), Offer)
        session.add(
            history_row(gone, change="deleted", actor=change.actor, previous=stored_row.usd_per_gpu_hour, now=now)
        )
        await session.delete(stored_row)
        report.deleted.append(offer_id)
    return report


async def offer_exists(session: AsyncSession, offer_id: str) -> bool:
    """Whether the offer is stored now."""
    return await session.get(OfferRow, offer_id) is not None


async def latest_changes(
    session: AsyncSession, row_type: type[H], key: InstrumentedAttribute[str], value: str, limit: int
) -> tuple[list[H], int]:
    """The latest `limit` history rows whose `key` is `value`, newest first, and how many there are in all."""
    statement = (
        select(row_type)
        .where(key == value)
        .order_by(row_type.recorded_at.desc(), row_type.id.desc())  # type: ignore[attr-defined]
        .limit(limit)
    )
    total = await session.scalar(select(func.count()).select_from(row_type).where(key == value))
    return list((await session.scalars(statement)).all()), int(total or 0)


async def offer_history(session: AsyncSession, offer_id: str, limit: int) -> tuple[list[OfferPriceHistoryRow], int]:
    """The offer's latest `limit` changes, newest first, and how many there are in all."""
    return await latest_changes(session, OfferPriceHistoryRow, OfferPriceHistoryRow.offer_id, offer_id, limit)
