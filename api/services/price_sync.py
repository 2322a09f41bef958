"""Apply a price feed to the stored catalog: added, changed and gone offers with history, all or nothing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

import msgspec
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from api.adapters.gpuhunt import FEED, Fetched, catalog_url
from api.adapters.storage.catalog_repository import (
    history_row,
    lock_catalog_writes,
    offer_from_row,
    record_catalog,
)
from api.adapters.storage.offer_repository import write_offers
from api.adapters.storage.tables import OfferPriceHistoryRow, OfferRow, ProviderRow
from domain.catalog import Catalog, Offer
from domain.pricing.feed import FEED_PROVIDERS, FeedDiff, diff, feed_offers

ACTOR = f"feed:{FEED}"


@dataclass
class SyncReport:
    """What a sync did (or, dry, would do) per provider, and which providers could not be read."""

    diffs: list[FeedDiff] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    applied: bool = False
    version: str = ""
    catalog_url: str = ""


async def _stored(session: AsyncSession, provider: str) -> tuple[dict[str, Offer], dict[str, OfferRow]]:
    rows = (
        await session.scalars(
            select(OfferRow).where(OfferRow.provider_id == provider, OfferRow.feed == FEED, OfferRow.gone_at.is_(None))
        )
    ).all()
    return {row.id: msgspec.convert(offer_from_row(row), Offer) for row in rows}, {row.id: row for row in rows}


async def _curated(session: AsyncSession, provider: str) -> dict[str, OfferRow]:
    """The provider's live offers no feed wrote (the reference data's and administrators')."""
    rows = await session.scalars(
        select(OfferRow).where(OfferRow.provider_id == provider, OfferRow.feed.is_(None), OfferRow.gone_at.is_(None))
    )
    return {row.id: row for row in rows.all()}


async def _administered(session: AsyncSession, offer_ids: Sequence[str]) -> dict[str, bool]:
    """Whether someone other than the feed made each offer's latest change."""
    rows = await session.execute(
        select(OfferPriceHistoryRow.offer_id, OfferPriceHistoryRow.actor)
        .where(OfferPriceHistoryRow.offer_id.in_(list(offer_ids)))
        .order_by(OfferPriceHistoryRow.recorded_at, OfferPriceHistoryRow.id)
    )
    return {offer_id: actor != ACTOR for offer_id, actor in rows}


async def sync(
    session: AsyncSession, catalog: Catalog, fetched: Sequence[Fetched], *, now: datetime, apply: bool
) -> SyncReport:
    """Diff every provider that answered; with `apply`, write it in the caller's transaction."""
    await lock_catalog_writes(session)
    today: date = now.date()
    report = SyncReport(failed={f.provider: f.error for f in fetched if f.error is not None}, catalog_url=catalog_url())
    rows_by_id: dict[str, OfferRow] = {}
    fresh_ids: set[str] = set()
    for answer in fetched:
        if answer.error is not None:
            continue
        provider = FEED_PROVIDERS[answer.provider]
        if catalog.provider(provider) is None:
            report.failed[answer.provider] = f"provider {provider!r} is not in the catalog: add it before syncing it"
            continue
        fresh, unmapped = feed_offers(catalog, answer.items, feed=FEED, version=answer.version, today=today)
        fresh_ids |= {offer.id for offer in fresh}
        stored, rows = await _stored(session, provider)
        existing = {
            row.id: row
            for row in (await session.scalars(select(OfferRow).where(OfferRow.id.in_([o.id for o in fresh])))).all()
        }
        rows_by_id |= rows | existing
        curated = {offer_id: msgspec.convert(offer_from_row(row), Offer) for offer_id, row in existing.items()}
        administered = await _administered(session, list(stored) + list(curated))
        administered |= {offer_id: True for offer_id, row in existing.items() if row.feed != FEED}
        others = await _curated(session, provider)
        rows_by_id |= others
        live_curated = [msgspec.convert(offer_from_row(row), Offer) for row in others.values()]
        report.diffs.append(diff(provider, fresh, stored | curated, administered, unmapped, live_curated))
    # A run where no provider answered has nothing to apply: it says so rather than reporting an empty success.
    if not apply or not report.diffs:
        return report
    upserts = [o for d in report.diffs for o in d.added] + [c.offer for d in report.diffs for c in d.changed]
    await write_offers(session, upserts, [], actor=ACTOR)
    for offer in upserts:
        row = rows_by_id.get(offer.id) or await session.get(OfferRow, offer.id)
        if row is not None:
            row.feed, row.last_seen_at, row.gone_at = FEED, now, None
    for offer_id in fresh_ids:
        if (row := rows_by_id.get(offer_id)) is not None and row.feed == FEED:
            row.last_seen_at = now
    for d in report.diffs:
        for offer in d.gone:
            row = rows_by_id[offer.id]
            row.gone_at = now
            session.add(history_row(offer, change="gone", actor=ACTOR, previous=row.usd_per_gpu_hour, now=now))
        for offer, by in d.superseded:
            row = rows_by_id[offer.id]
            row.gone_at = now
            session.add(
                history_row(
                    offer, change="superseded", actor=ACTOR, previous=row.usd_per_gpu_hour, now=now, superseded_by=by
                )
            )
    seen = {d.provider for d in report.diffs}
    for provider_row in (await session.scalars(select(ProviderRow).where(ProviderRow.id.in_(seen)))).all():
        provider_row.record = provider_row.record | {"feed": FEED, "last_synced_at": now.isoformat()}
        provider_row.updated_at = now
    await session.flush()
    report.version = await record_catalog(session, now)
    report.applied = True
    return report
