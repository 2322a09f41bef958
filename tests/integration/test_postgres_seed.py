"""Seeding a real PostgreSQL database: idempotent, price changes keep history, newer stored prices survive."""

from __future__ import annotations

from datetime import timedelta

import msgspec
import pytest
from sqlalchemy import func, select

from api.adapters.storage.bootstrap import migrate_and_seed
from api.adapters.storage.catalog_repository import load_catalog, seed_catalog, stored_version
from api.adapters.storage.database import create_engine, create_session_factory
from api.adapters.storage.offer_repository import write_offers
from api.adapters.storage.tables import OfferPriceHistoryRow
from domain.catalog import Catalog
from tests.conftest import with_offers

pytestmark = pytest.mark.integration


def with_offer(reference: Catalog, offer_id: str, **changes: object) -> Catalog:
    offers = [msgspec.structs.replace(o, **changes) if o.id == offer_id else o for o in reference.offers]
    return with_offers(reference, offers)


async def test_seed_is_idempotent_and_price_changes_keep_history(postgres_url: str, reference: Catalog) -> None:
    first = await migrate_and_seed(postgres_url)
    assert first.inserted == {
        "gpus": len(reference.gpus),
        "providers": len(reference.providers),
        "systems": len(reference.systems),
        "models": len(reference.models),
        "offers": len(reference.offers),
    }
    assert first.version == reference.version

    engine = create_engine(postgres_url)
    sessions = create_session_factory(engine)
    try:
        async with sessions() as session:
            history = await session.scalar(select(func.count()).select_from(OfferPriceHistoryRow))
            stored = await load_catalog(session)
            assert history == len(reference.offers)
            assert stored is not None and stored.version == reference.version
            assert await stored_version(session) == reference.version

        second = await migrate_and_seed(postgres_url)
        assert not second.changed and second.version == first.version
        async with sessions() as session:
            assert await session.scalar(select(func.count()).select_from(OfferPriceHistoryRow)) == history

        offer_id = "digitalocean-h100-sxm-on-demand"
        old = reference.offers[[o.id for o in reference.offers].index(offer_id)]
        cheaper = with_offer(reference, offer_id, usd_per_gpu_hour=2.49, as_of=old.as_of + timedelta(days=30))
        async with sessions() as session, session.begin():
            report = await seed_catalog(session, cheaper)
        assert report.updated["offers"] == 1 and report.version == cheaper.version != reference.version

        async with sessions() as session:
            rows = (
                await session.scalars(
                    select(OfferPriceHistoryRow)
                    .where(OfferPriceHistoryRow.offer_id == offer_id)
                    .order_by(OfferPriceHistoryRow.id)
                )
            ).all()
            assert [(r.change, r.previous_usd_per_gpu_hour, r.usd_per_gpu_hour) for r in rows] == [
                ("created", None, old.usd_per_gpu_hour),
                ("updated", old.usd_per_gpu_hour, 2.49),
            ]
            stored = await load_catalog(session)
            assert stored is not None and stored.lowest_prices("h100-sxm")["on_demand"].usd_per_gpu_hour <= 2.49
            assert await stored_version(session) == cheaper.version

    finally:
        await engine.dispose()


async def test_seeding_keeps_what_administrators_did(postgres_url: str, reference: Catalog) -> None:
    """A restart (which seeds) must not undo an administrator's price or bring back a deleted offer."""
    await migrate_and_seed(postgres_url)
    engine = create_engine(postgres_url)
    sessions = create_session_factory(engine)
    edited, deleted = reference.offers[0], reference.offers[1]
    try:
        async with sessions() as session, session.begin():
            await write_offers(
                session, [msgspec.structs.replace(edited, usd_per_gpu_hour=0.99)], [deleted.id], actor="api-key-1"
            )
        report = await migrate_and_seed(postgres_url)
        assert sorted(report.kept) == sorted([edited.id, deleted.id]) and not report.changed
        async with sessions() as session:
            stored = await load_catalog(session)
        assert stored is not None
        assert {o.id: o.usd_per_gpu_hour for o in stored.offers}[edited.id] == 0.99
        assert deleted.id not in {o.id for o in stored.offers}

        # Newer reference data (a later release) does replace an administrator's older price.
        newer = with_offer(reference, edited.id, usd_per_gpu_hour=1.23, as_of=edited.as_of + timedelta(days=1))
        async with sessions() as session, session.begin():
            report = await seed_catalog(session, newer)
        assert report.updated["offers"] == 1
    finally:
        await engine.dispose()


async def test_an_offer_dropped_from_the_reference_goes_unless_an_administrator_touched_it(
    postgres_url: str, reference: Catalog
) -> None:
    await migrate_and_seed(postgres_url)
    dropped, administered = "runpod-h200-on-demand", "runpod-b200-on-demand"
    engine = create_engine(postgres_url)
    sessions = create_session_factory(engine)
    try:
        async with sessions() as session, session.begin():
            changed = next(o for o in reference.offers if o.id == administered)
            await write_offers(session, [msgspec.structs.replace(changed, usd_per_gpu_hour=5.5)], [], actor="admin")
        smaller = with_offers(reference, [o for o in reference.offers if o.id not in (dropped, administered)])
        async with sessions() as session, session.begin():
            report = await seed_catalog(session, smaller)
        assert report.removed["offers"] == 1 and report.changed
        async with sessions() as session:
            stored = await load_catalog(session)
            assert stored is not None
            ids = {o.id for o in stored.offers}
            assert dropped not in ids and administered in ids
            last = await session.scalar(
                select(OfferPriceHistoryRow.change)
                .where(OfferPriceHistoryRow.offer_id == dropped)
                .order_by(OfferPriceHistoryRow.id.desc())
                .limit(1)
            )
            assert last == "deleted"
    finally:
        await engine.dispose()
