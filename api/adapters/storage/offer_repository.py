"""Price administration: create, update and delete offers with a history row each, in one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

import msgspec
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from api.adapters.storage.catalog_repository import (
    add_to_offers_digest,
    history_row,
    load_catalog,
    lock_catalog_writes,
    offer_columns,
    offer_from_row,
    record_catalog,
    stored_digests,
)
from api.adapters.storage.tables import OfferPriceHistoryRow, OfferRow
from domain.catalog import Catalog, Offer
from domain.catalog.digest import offers_delta

H = TypeVar("H")


@dataclass
class WriteReport:
    """What one administrative change did."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    version: str = ""
    # What the transaction did to the served offers (every change of its batch), for the writing instance to serve
    # it at once without reading the catalog back.
    written: list[Offer] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)

    def apply(self, catalog: Catalog) -> Catalog:
        """`catalog` with this change's offers."""
        return catalog.with_offers(self.written, self.gone)

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

    `current` is the caller's snapshot: when its other tables are the stored ones, the offers are checked against
    it without reading every table. Raises CatalogError when an offer names a GPU or provider the catalog lacks
    (the transaction must then be rolled back).
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
    """Apply several clients' changes, in order, in one transaction and one new catalog version.

    Each change gets its own report (a later one sees what an earlier one wrote); all share the version. Other
    writers' offers are not waited for: this holds its own offers' rows and, for the length of one statement and
    the commit, the row of the offers' digest.
    """
    now = datetime.now(UTC)
    digests = await stored_digests(session)
    # Without stored digests (a store just migrated) the version can only be computed from every table, held still.
    await lock_catalog_writes(session, shared=digests is not None)
    # Offers only reference the other tables, which the shared lock holds still: `current` checks them when its
    # digest of them is the stored one, and is never used for other offers (other writers may be changing them).
    fresh = digests is not None and current is not None and current.structure_digest == digests[0]
    base = current if fresh else await load_catalog(session)
    ids = sorted({offer.id for change in changes for offer in change.upserts} | {i for c in changes for i in c.deletes})
    # Locked in id order, so two batches that share offers wait for each other instead of deadlocking.
    rows = await session.scalars(select(OfferRow).where(OfferRow.id.in_(ids)).order_by(OfferRow.id).with_for_update())
    stored = {row.id: row for row in rows.all()}
    before = {offer_id: _live_offer(row) for offer_id, row in stored.items()}
    reports = [await _apply(session, stored, change, now) for change in changes]
    if not any(report.changed for report in reports):
        return reports
    after = {offer_id: _live_offer(row) for offer_id, row in stored.items()}
    changed_ids = [i for i in ids if before.get(i) != after.get(i)]
    written = [offer for i in changed_ids if (offer := after.get(i)) is not None]
    gone = [i for i in changed_ids if after.get(i) is None]
    if base is not None:
        base.with_offers(written, gone)  # raises CatalogError (the caller rolls back) for an unknown GPU or provider
    await session.flush()
    removed = [offer for i in changed_ids if (offer := before.get(i)) is not None]
    version = await add_to_offers_digest(session, offers_delta(written, removed), now) if digests else None
    if version is None:  # no digests stored yet: this writer holds the exclusive lock
        version = await record_catalog(session, now)
    for report in reports:
        report.version, report.written, report.gone = version, written, gone
    return reports


def _live_offer(row: OfferRow | None) -> Offer | None:
    """The offer a row puts in the catalog: None for a deleted row and for one a price feed no longer returns."""
    if row is None or row.gone_at is not None:
        return None
    return msgspec.convert(offer_from_row(row), Offer)


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
        if row.gone_at is None and offer_from_row(row) == msgspec.structs.asdict(offer):
            report.unchanged.append(offer.id)
            continue
        previous = row.usd_per_gpu_hour
        for column, value in offer_columns(offer).items():
            setattr(row, column, value)
        # An administrator's offer is served, also one a price feed stopped returning.
        row.updated_at, row.gone_at = now, None
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
