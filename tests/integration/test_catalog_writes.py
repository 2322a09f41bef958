"""Admin writes on PostgreSQL: the writing instance swaps the changed offers into its snapshot instead of reading
every table back, and snapshots are decoded and built off the event loop."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import msgspec
import pytest
from litestar.testing import AsyncTestClient
from sqlalchemy import event

import api.adapters.storage.catalog_repository
import api.wiring
from api.adapters.storage.catalog_repository import load_catalog, stored_version
from api.adapters.storage.database import create_engine, create_session_factory
from api.adapters.storage.offer_repository import write_offers
from api.app import create_app
from api.services.catalog_view import CatalogView
from api.settings import Settings
from domain.catalog import Catalog, Offer

pytestmark = pytest.mark.integration

KEY = "catalog-write-key"
OFFER = {
    "provider": "digitalocean",
    "gpu": "h100-sxm",
    "pricing": "on_demand",
    "usd_per_gpu_hour": 2.2222,
    "as_of": "2026-05-28",
    "source": "https://www.digitalocean.com/pricing/gpu-droplets",
}


async def read_back(url: str) -> tuple[Catalog | None, str | None]:
    engine = create_engine(url)
    try:
        async with create_session_factory(engine)() as session:
            return await load_catalog(session), await stored_version(session)
    finally:
        await engine.dispose()


def on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def test_a_put_swaps_the_offer_in_without_reading_the_catalog_back(seeded_postgres: str) -> None:
    settings = Settings(database_url=seeded_postgres, api_keys=(KEY,), rate_limit_per_minute=0)
    async with AsyncTestClient(app=create_app(settings)) as client:
        services = client.app.state.services
        full_reads: list[str] = []

        def watch(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
            flat = " ".join(statement.split()).lower()
            if "from offers" in flat and "where" not in flat:
                full_reads.append(flat)

        event.listen(services.engine.sync_engine, "before_cursor_execute", watch)
        try:
            answer = await client.put("/v1/admin/offers/write-test-h100", json=OFFER, headers={"X-API-Key": KEY})
        finally:
            event.remove(services.engine.sync_engine, "before_cursor_execute", watch)
        assert answer.status_code == 201, answer.text
        assert full_reads == []
        # The version computed from the swapped snapshot is the one every other instance computes from the tables.
        from_tables, recorded = await read_back(seeded_postgres)
        assert from_tables is not None
        assert services.view.version == recorded == from_tables.version
        offers = {offer.id: offer for offer in services.view.catalog.offers}
        assert offers["write-test-h100"].usd_per_gpu_hour == 2.2222


async def test_snapshots_are_built_off_the_event_loop(seeded_postgres: str, monkeypatch: pytest.MonkeyPatch) -> None:
    built_on_loop: list[bool] = []
    decode = api.adapters.storage.catalog_repository._catalog

    def spy_decode(*args: Any) -> Any:
        built_on_loop.append(on_event_loop())
        return decode(*args)

    class SpyView(CatalogView):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            built_on_loop.append(on_event_loop())
            super().__init__(*args, **kwargs)

    settings = Settings(database_url=seeded_postgres, api_keys=(KEY,), rate_limit_per_minute=0, catalog_poll_s=0.05)
    async with AsyncTestClient(app=create_app(settings)) as client:
        monkeypatch.setattr(api.adapters.storage.catalog_repository, "_catalog", spy_decode)
        monkeypatch.setattr(api.wiring, "CatalogView", SpyView)
        before = (await client.get("/health/ready")).json()["catalog_version"]
        # Another instance's change: this one finds it by polling and has to read the tables.
        engine = create_engine(seeded_postgres)
        try:
            async with create_session_factory(engine)() as session, session.begin():
                offer = msgspec.convert(OFFER | {"id": "write-test-h100-b"}, Offer)
                await write_offers(session, [offer], [], actor="another instance")
        finally:
            await engine.dispose()
        deadline = time.monotonic() + 15
        version = before
        while version == before and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            version = (await client.get("/health/ready")).json()["catalog_version"]
        assert version != before
        answer = await client.put("/v1/admin/offers/write-test-h100-c", json=OFFER, headers={"X-API-Key": KEY})
        assert answer.status_code == 201, answer.text
    assert built_on_loop and not any(built_on_loop)
