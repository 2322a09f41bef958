"""Price administration: create, update and delete offers with a history row each, in one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any, NamedTuple, Protocol, TypeVar, cast

import msgspec
from sqlalchemy import Table, bindparam, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from api.adapters.storage.catalog_repository import (
    add_to_offers_digest,
    history_values,
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
    """Apply several clients' changes, in order, in the session's transaction and one new catalog version."""
    return await write_batch(SessionTables(session), changes, current=current)


class RowChanges(NamedTuple):
    """What one batch does to the offer rows: column values by kind of change, and the history rows."""

    deleted: list[str]
    created: list[dict[str, Any]]
    updated: list[dict[str, Any]]
    history: list[dict[str, Any]]


class OfferTables(Protocol):
    """The reads and writes of one batch of offer changes, on one open transaction."""

    async def digests(self) -> tuple[int, int] | None: ...

    async def lock(self, *, shared: bool) -> None: ...

    async def catalog(self) -> Catalog | None: ...

    async def locked_rows(self, ids: Sequence[str]) -> dict[str, SimpleNamespace]: ...

    async def store(self, rows: RowChanges) -> None: ...

    async def move_offers_digest(self, delta: int, now: datetime) -> str | None: ...

    async def record(self, now: datetime) -> str: ...


async def write_batch(
    tables: OfferTables, changes: Sequence[OfferChange], *, current: Catalog | None = None
) -> list[WriteReport]:
    """Apply several clients' changes, in order, in one transaction and one new catalog version.

    Each change gets its own report (a later one sees what an earlier one wrote); all share the version. Other
    writers' offers are not waited for: this holds its own offers' rows and, for the length of one statement and
    the commit, the row of the offers' digest.
    """
    now = datetime.now(UTC)
    digests = await tables.digests()
    # Without stored digests (a store just migrated) the version can only be computed from every table, held still.
    await tables.lock(shared=digests is not None)
    # Offers only reference the other tables, which the shared lock holds still: `current` checks them when its
    # digest of them is the stored one, and is never used for other offers (other writers may be changing them).
    fresh = digests is not None and current is not None and current.structure_digest == digests[0]
    base = current if fresh else await tables.catalog()
    ids = sorted({offer.id for change in changes for offer in change.upserts} | {i for c in changes for i in c.deletes})
    original = await tables.locked_rows(ids)
    stored = dict(original)
    before = {offer_id: _live_offer(row) for offer_id, row in stored.items()}
    history: list[dict[str, Any]] = []
    reports = [_apply(stored, change, now, history) for change in changes]
    if not any(report.changed for report in reports):
        return reports
    after = {offer_id: _live_offer(row) for offer_id, row in stored.items()}
    changed_ids = [i for i in ids if before.get(i) != after.get(i)]
    written = [offer for i in changed_ids if (offer := after.get(i)) is not None]
    gone = [i for i in changed_ids if after.get(i) is None]
    if base is not None:
        base.check_offers(written)  # raises CatalogError (the caller rolls back) for an unknown GPU or provider
    await tables.store(_row_changes(original, stored, history))
    removed = [offer for i in changed_ids if (offer := before.get(i)) is not None]
    version = await tables.move_offers_digest(offers_delta(written, removed), now) if digests else None
    if version is None:  # no digests stored yet: this writer holds the exclusive lock
        version = await tables.record(now)
    for report in reports:
        report.version, report.written, report.gone = version, written, gone
    return reports


OFFERS = cast("Table", OfferRow.__table__)
HISTORY = cast("Table", OfferPriceHistoryRow.__table__)


class SessionTables:
    """The batch's statements through SQLAlchemy, on either dialect."""

    def __init__(self, session: AsyncSession) -> None:
        self._session = session

    async def digests(self) -> tuple[int, int] | None:
        return await stored_digests(self._session)

    async def lock(self, *, shared: bool) -> None:
        await lock_catalog_writes(self._session, shared=shared)

    async def catalog(self) -> Catalog | None:
        return await load_catalog(self._session)

    async def locked_rows(self, ids: Sequence[str]) -> dict[str, SimpleNamespace]:
        # Locked in id order, so two batches that share offers wait for each other instead of deadlocking.
        statement = select(OFFERS).where(OFFERS.c.id.in_(ids)).order_by(OFFERS.c.id).with_for_update()
        return {row.id: SimpleNamespace(**row._mapping) for row in await self._session.execute(statement)}

    async def store(self, rows: RowChanges) -> None:
        session = self._session
        if rows.deleted:
            await session.execute(delete(OFFERS).where(OFFERS.c.id.in_(rows.deleted)))
        if rows.created:
            await session.execute(insert(OFFERS), rows.created)
        if rows.updated:
            # Every column but the key is set, from each row's own values (SET takes the first row's keys).
            statement = update(OFFERS).where(OFFERS.c.id == bindparam("row_id"))
            await session.execute(statement, [_without_id(row) | {"row_id": row["id"]} for row in rows.updated])
        if rows.history:
            await session.execute(insert(HISTORY), rows.history)

    async def move_offers_digest(self, delta: int, now: datetime) -> str | None:
        return await add_to_offers_digest(self._session, delta, now)

    async def record(self, now: datetime) -> str:
        return await record_catalog(self._session, now)


def _row_changes(
    original: dict[str, SimpleNamespace], stored: dict[str, SimpleNamespace], history: list[dict[str, Any]]
) -> RowChanges:
    """The rows as `_apply` left them, by kind of change (a changed row is a new object)."""
    return RowChanges(
        deleted=[offer_id for offer_id in original if offer_id not in stored],
        created=[vars(row) for offer_id, row in stored.items() if offer_id not in original],
        updated=[vars(row) for offer_id, row in stored.items() if row is not original.get(offer_id, row)],
        history=history,
    )


def _without_id(columns: dict[str, Any]) -> dict[str, Any]:
    return {column: value for column, value in columns.items() if column != "id"}


def _live_offer(row: SimpleNamespace | None) -> Offer | None:
    """The offer a row puts in the catalog: None for a deleted row and for one a price feed no longer returns."""
    if row is None or row.gone_at is not None:
        return None
    return msgspec.convert(offer_from_row(row), Offer)


def _apply(
    stored: dict[str, SimpleNamespace], change: OfferChange, now: datetime, history: list[dict[str, Any]]
) -> WriteReport:
    """One change on the rows (`stored` is kept current for the changes after it; a changed row is a new object)."""
    report = WriteReport()
    for offer in change.upserts:
        row = stored.get(offer.id)
        if row is None:
            stored[offer.id] = SimpleNamespace(
                **offer_columns(offer), updated_at=now, feed=None, last_seen_at=None, gone_at=None
            )
            history.append(history_values(offer, change="created", actor=change.actor, previous=None, now=now))
            report.created.append(offer.id)
            continue
        if row.gone_at is None and offer_from_row(row) == msgspec.structs.asdict(offer):
            report.unchanged.append(offer.id)
            continue
        # An administrator's offer is served, also one a price feed stopped returning.
        stored[offer.id] = SimpleNamespace(**(vars(row) | offer_columns(offer) | {"updated_at": now, "gone_at": None}))
        previous = row.usd_per_gpu_hour
        history.append(history_values(offer, change="updated", actor=change.actor, previous=previous, now=now))
        report.updated.append(offer.id)
    for offer_id in change.deletes:
        gone_row = stored.pop(offer_id, None)
        if gone_row is None:
            continue
        gone = msgspec.convert(offer_from_row(gone_row), Offer)
        history.append(
            history_values(gone, change="deleted", actor=change.actor, previous=gone_row.usd_per_gpu_hour, now=now)
        )
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
