"""Offer writes on PostgreSQL are coalesced: changes that arrive together share one transaction and version, each
answered for itself, and one a batch cannot take fails alone."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from api.adapters.storage.catalog_repository import load_catalog, lock_catalog_writes, offer_columns, stored_version
from api.adapters.storage.database import create_engine, create_session_factory
from api.adapters.storage.model_repository import write_model
from api.adapters.storage.offer_repository import OfferChange, WriteReport
from api.adapters.storage.offer_writer import OfferWriter
from api.adapters.storage.tables import OfferPriceHistoryRow, OfferRow
from domain.catalog import Catalog, CatalogError

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
        # A provider the catalog does not hold: the catalog check refuses this change and only this one.
        bad = msgspec.structs.replace(offers[0], id="nowhere-h100", provider="no-such-provider")
        results = await asyncio.gather(
            *(writer.write(change, catalog) for change in changes),
            writer.write(OfferChange([bad], [], "t"), catalog),
            return_exceptions=True,
        )
    finally:
        await writer.close()
    *good, refused = results
    assert isinstance(refused, CatalogError) and "no-such-provider" in str(refused)
    assert all(isinstance(report, WriteReport) for report in good), good
    reports = [report for report in good if isinstance(report, WriteReport)]
    assert [report.updated for report in reports] == [[offer.id] for offer in offers]
    after, version, history_after = await stored(seeded_postgres)
    assert history_after == history_before + len(offers)
    assert version == after.version == reports[-1].version
    prices = {offer.id: offer.usd_per_gpu_hour for offer in after.offers}
    assert all(prices[offer.id] == round(offer.usd_per_gpu_hour + 0.5, 4) for offer in offers)
    assert "nowhere-h100" not in prices


async def test_writers_on_several_instances_leave_the_version_of_what_is_stored(seeded_postgres: str) -> None:
    """Each writer moves the stored version by its own offers' difference; together they must land on the version
    of the catalog the tables hold, also when they change the same offers, delete and create."""
    catalog, _, _ = await stored(seeded_postgres)
    offers = catalog.offers[:6]
    writers = [OfferWriter(seeded_postgres) for _ in range(3)]
    for writer in writers:
        writer.start()
    try:
        jobs = []
        for round_ in range(4):
            for number, writer in enumerate(writers):
                # Every writer changes every one of these offers: the row locks order them.
                for offer in offers:
                    price = round(offer.usd_per_gpu_hour + round_ + number / 10 + 0.0001, 4)
                    change = OfferChange([msgspec.structs.replace(offer, usd_per_gpu_hour=price)], [], f"w{number}")
                    jobs.append(writer.write(change, catalog))
        created = msgspec.structs.replace(offers[0], id="digest-check-new")
        jobs.append(writers[0].write(OfferChange([created], [], "w0"), catalog))
        deleted = catalog.offers[len(offers)].id
        jobs.append(writers[1].write(OfferChange([], [deleted], "w1"), catalog))
        results = await asyncio.gather(*jobs, return_exceptions=True)
    finally:
        for writer in writers:
            await writer.close()
    assert all(isinstance(result, WriteReport) for result in results), [
        r for r in results if not isinstance(r, WriteReport)
    ]
    after, version, _ = await stored(seeded_postgres)
    assert version == after.version != catalog.version
    assert "digest-check-new" in {offer.id for offer in after.offers}
    assert deleted not in {offer.id for offer in after.offers}


async def test_an_open_offer_transaction_holds_back_model_writes_and_no_offer_writer(seeded_postgres: str) -> None:
    """Offer writers share the catalog lock: one whose transaction is still open does not hold back another
    instance's offer write, while a model write (which needs every table still) waits for it."""
    catalog, _, _ = await stored(seeded_postgres)
    engine = create_engine(seeded_postgres)
    sessions = create_session_factory(engine)
    writer = OfferWriter(seeded_postgres)
    writer.start()
    try:
        async with sessions() as open_session, open_session.begin():
            await lock_catalog_writes(open_session, shared=True)
            offer = catalog.offers[0]
            cheaper = msgspec.structs.replace(offer, usd_per_gpu_hour=round(offer.usd_per_gpu_hour / 2, 4))
            offer_write = asyncio.ensure_future(writer.write(OfferChange([cheaper], [], "t"), catalog))
            # Liveness, not speed: with one lock for every writer this write would wait for the open transaction.
            done, _ = await asyncio.wait({offer_write}, timeout=60)
            assert offer_write in done and offer_write.result().updated == [offer.id]

            async def write_a_model() -> None:
                async with sessions() as session, session.begin():
                    await write_model(session, catalog.models[0], actor="t")

            model_write = asyncio.ensure_future(write_a_model())
            assert await waiting_advisory_locks(sessions) == 1
            assert not model_write.done()
        await model_write
    finally:
        await writer.close()
        await engine.dispose()


async def waiting_advisory_locks(sessions: async_sessionmaker[AsyncSession]) -> int:
    """How many advisory lock requests wait, once one does (or 0 after a few seconds)."""
    statement = text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
    for _ in range(200):
        async with sessions() as session:
            if waiting := int(await session.scalar(statement) or 0):
                return waiting
        await asyncio.sleep(0.02)
    return 0


async def test_both_statement_paths_store_exactly_the_offer_and_its_history(seeded_postgres: str) -> None:
    """The writer's own statements (given a current snapshot) and the SQLAlchemy ones it falls back to (given none)
    store the same thing: each offer's columns as written, and one history row per change."""
    catalog, _, _ = await stored(seeded_postgres)
    writer = OfferWriter(seeded_postgres)
    writer.start()
    expected: dict[str, dict[str, Any]] = {}
    try:
        for offer, current, actor in ((catalog.offers[0], catalog, "own"), (catalog.offers[1], None, "fallback")):
            changed = msgspec.structs.replace(offer, usd_per_gpu_hour=9.8765, notes="n", region="eu")
            created = msgspec.structs.replace(changed, id=f"{offer.id}-copy")
            report = await writer.write(OfferChange([changed, created], [], actor), current)
            assert (report.updated, report.created) == ([offer.id], [created.id])
            assert (await writer.write(OfferChange([], [created.id], actor), current)).deleted == [created.id]
            expected[actor] = {"row": offer_columns(changed), "previous": offer.usd_per_gpu_hour}
    finally:
        await writer.close()
    engine = create_engine(seeded_postgres)
    try:
        async with create_session_factory(engine)() as session:
            for actor, wanted in expected.items():
                row = (
                    await session.execute(select(OfferRow.__table__).where(OfferRow.id == wanted["row"]["id"]))
                ).one()
                assert {column: row._mapping[column] for column in wanted["row"]} == wanted["row"]
                assert row.gone_at is None
                history = await session.execute(
                    select(OfferPriceHistoryRow.__table__)
                    .where(OfferPriceHistoryRow.actor == actor)
                    .order_by(OfferPriceHistoryRow.id)
                )
                assert [(h.change, h.previous_usd_per_gpu_hour, h.usd_per_gpu_hour) for h in history] == [
                    ("updated", wanted["previous"], 9.8765),
                    ("created", None, 9.8765),
                    ("deleted", 9.8765, None),
                ]
    finally:
        await engine.dispose()


async def test_a_connection_the_database_closed_is_replaced_before_the_batch(seeded_postgres: str) -> None:
    """After a database restart the writer's kept connection is dead: the next batch opens a new one instead of
    failing (what a pool's pre-ping did for SQLAlchemy's connections)."""
    catalog, _, _ = await stored(seeded_postgres)
    offer = catalog.offers[0]
    writer = OfferWriter(seeded_postgres)
    writer.start()
    engine = create_engine(seeded_postgres)
    try:
        first = msgspec.structs.replace(offer, usd_per_gpu_hour=7.1)
        assert (await writer.write(OfferChange([first], [], "t"), catalog)).updated == [offer.id]
        async with engine.connect() as connection:
            killed = await connection.scalar(
                text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = ''"
                )
            )
        assert killed
        second = msgspec.structs.replace(offer, usd_per_gpu_hour=7.2)
        assert (await writer.write(OfferChange([second], [], "t"), catalog)).updated == [offer.id]
    finally:
        await writer.close()
        await engine.dispose()
    after, _, _ = await stored(seeded_postgres)
    assert {o.id: o.usd_per_gpu_hour for o in after.offers}[offer.id] == 7.2
