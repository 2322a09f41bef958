"""Offer writes on PostgreSQL are coalesced: changes that arrive together share one transaction and version, each
answered for itself, and one a batch cannot take fails alone."""

from __future__ import annotations

import asyncio

import msgspec
import pytest
from sqlalchemy import func, select

from api.adapters.storage.catalog_repository import load_catalog, stored_version
from api.adapters.storage.database import DATABASE_ERRORS, create_engine, create_session_factory
from api.adapters.storage.offer_repository import OfferChange, WriteReport
from api.adapters.storage.offer_writer import OfferWriter
from api.adapters.storage.tables import OfferPriceHistoryRow
from domain.catalog import Catalog

pytestmark = pytest.mark.integration


async def stored(url: str) -> tuple[Catalog, str | None, int]:
    engine = create_engine(url)
    try:
        async with create_session_factory(engine)() as session:
            catalog = await load_catalog(session)
            assert catalog is not None
            history = await session.scalar(select(func.count()).select_from(OfferPriceHistoryRow))
            return catalog, await stored_version(session), int(history or 0)
    finally:
        await engine.dispose()


async def test_concurrent_changes_share_a_version_and_one_bad_change_fails_alone(seeded_postgres: str) -> None:
    catalog, _, history_before = await stored(seeded_postgres)
    offers = catalog.offers[:12]
    writer = OfferWriter(seeded_postgres)
    writer.start()
    try:
        changes = [
            OfferChange(
                [msgspec.structs.replace(offer, usd_per_gpu_hour=round(offer.usd_per_gpu_hour + 0.5, 4))], [], "t"
            )
            for offer in offers
        ]
        # A provider the database does not hold: its foreign key refuses this change and only this one.
        bad = msgspec.structs.replace(offers[0], id="nowhere-h100", provider="no-such-provider")
        results = await asyncio.gather(
            *(writer.write(change, catalog) for change in changes),
            writer.write(OfferChange([bad], [], "t"), catalog),
            return_exceptions=True,
        )
    finally:
        await writer.close()
    *good, refused = results
    assert isinstance(refused, DATABASE_ERRORS)
    assert all(isinstance(report, WriteReport) for report in good), good
    reports = [report for report in good if isinstance(report, WriteReport)]
    assert [report.updated for report in reports] == [[offer.id] for offer in offers]
    after, version, history_after = await stored(seeded_postgres)
    assert history_after == history_before + len(offers)
    assert version == after.version == reports[-1].version
    prices = {offer.id: offer.usd_per_gpu_hour for offer in after.offers}
    assert all(prices[offer.id] == round(offer.usd_per_gpu_hour + 0.5, 4) for offer in offers)
    assert "nowhere-h100" not in prices
