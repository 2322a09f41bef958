"""An instance that learns of another's catalog change reloads incrementally when only offers changed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import update

from api import wiring as services_module
from api.adapters.storage.bootstrap import migrate_and_seed
from api.adapters.storage.catalog_repository import load_catalog, record_catalog, stored_version
from api.adapters.storage.tables import OfferRow
from api.app import create_app
from api.settings import Settings
from api.wiring import Services
from tests.conftest import sqlite_url

KEY = "admin-key-for-tests"
HEADERS = {"X-API-Key": KEY}
CHANGED = "digitalocean-h100-sxm-on-demand"
Client = AsyncTestClient[Litestar]
CONFIGS = Path(__file__).parent.parent / "fixtures" / "hf_configs"


@pytest.fixture
async def pair(tmp_path: Path) -> AsyncIterator[tuple[Client, Client]]:
    """Two instances on one database; the second polls too rarely to reload by itself during a test."""
    url = sqlite_url(tmp_path)
    await migrate_and_seed(url)
    writer = Settings(database_url=url, api_keys=(KEY,), rate_limit_per_minute=0)
    other = Settings(database_url=url, rate_limit_per_minute=0, catalog_poll_s=3600)
    async with AsyncTestClient(app=create_app(writer)) as first, AsyncTestClient(app=create_app(other)) as second:
        yield first, second


def services_of(client: Client) -> Services:
    services: Services = client.app.state.services
    return services


async def offers(client: Client) -> dict[str, dict[str, Any]]:
    body = (await client.get("/v1/offers", params={"limit": 200})).json()
    return {item["id"]: item for item in body["items"]}


def no_whole_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    real = services_module.load_catalog

    async def counted(session: Any) -> Any:
        reads.append("whole catalog")
        return await real(session)

    monkeypatch.setattr(services_module, "load_catalog", counted)
    return reads


async def test_an_offer_changed_elsewhere_is_swapped_in_without_reading_the_whole_catalog(
    pair: tuple[Client, Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = pair
    before = await offers(first)
    removed = next(offer_id for offer_id in before if offer_id != CHANGED)
    changed = before[CHANGED] | {"usd_per_gpu_hour": 2.49, "as_of": "2026-11-20", "source": "the provider's page"}
    assert (await first.put(f"/v1/admin/offers/{CHANGED}", json=changed, headers=HEADERS)).status_code == 200
    assert (await first.delete(f"/v1/admin/offers/{removed}", headers=HEADERS)).status_code == 204
    # The second change came within the reload interval of the first: the writer serves both once it ends.
    await services_of(first).sync.settled()
    reads = no_whole_reads(monkeypatch)

    view = await services_of(second).reload_catalog()

    assert reads == []
    assert view.version == services_of(first).view.version
    served = await offers(second)
    assert served[CHANGED]["usd_per_gpu_hour"] == 2.49 and removed not in served


async def test_writes_within_the_interval_are_one_new_snapshot_at_its_end(pair: tuple[Client, Client]) -> None:
    """Every new snapshot costs every answer cached on the one before: a stream of writes is one per interval."""
    first, _ = pair
    services = services_of(first)
    offer = (await offers(first))[CHANGED]
    seeded = services.view.version
    prices = [2.41, 2.42, 2.43, 2.44, 2.45]
    for price in prices:
        response = await first.put(
            f"/v1/admin/offers/{CHANGED}", json=offer | {"usd_per_gpu_hour": price}, headers=HEADERS
        )
        assert response.status_code == 200, response.text
        if price == prices[0]:
            served_at_once = services.view.version
    assert seeded != served_at_once == services.view.version  # the first at once, the others wait
    assert (await offers(first))[CHANGED]["usd_per_gpu_hour"] == prices[0]

    await services.sync.settled()

    assert services.view.version == await services.stored_version()
    assert (await offers(first))[CHANGED]["usd_per_gpu_hour"] == prices[-1]


async def test_a_change_beyond_offers_reloads_the_whole_catalog(
    pair: tuple[Client, Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = pair
    config = json.loads((CONFIGS / "qwen3-30b-a3b.json").read_text())
    body = {"hf_config": config, "name": "Our MoE", "aliases": ["acme/our-moe"], "sources": ["ours"]}
    assert (await first.put("/v1/admin/models/our-moe", json=body, headers=HEADERS)).status_code == 201
    reads = no_whole_reads(monkeypatch)

    view = await services_of(second).reload_catalog()

    assert reads == ["whole catalog"]
    assert view.version == services_of(first).view.version
    assert (await second.get("/v1/models/acme/our-moe")).status_code == 200


async def test_reloads_asked_for_while_one_runs_are_answered_by_one(
    pair: tuple[Client, Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A burst of changes elsewhere costs this instance one reload after the one running, not one each."""
    first, second = pair
    changed = (await offers(first))[CHANGED] | {"usd_per_gpu_hour": 2.39}
    assert (await first.put(f"/v1/admin/offers/{CHANGED}", json=changed, headers=HEADERS)).status_code == 200
    reads: list[str] = []
    real = services_module.load_changed_offers

    async def counted(session: Any, current: Any) -> Any:
        reads.append("offers")
        return await real(session, current)

    monkeypatch.setattr(services_module, "load_changed_offers", counted)

    views = await asyncio.gather(*(services_of(second).reload_catalog() for _ in range(10)))

    # The first reload began before the other nine were asked for: one more read answers all nine.
    assert len(reads) == 2
    assert {view.version for view in views} == {services_of(first).view.version}


async def test_the_writing_instance_serves_its_change_without_reading_the_catalog_back(
    pair: tuple[Client, Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, _ = pair
    changed = (await offers(first))[CHANGED] | {"usd_per_gpu_hour": 2.29}
    reads = no_whole_reads(monkeypatch)
    monkeypatch.setattr(services_module, "load_changed_offers", None)  # any database read fails the test

    assert (await first.put(f"/v1/admin/offers/{CHANGED}", json=changed, headers=HEADERS)).status_code == 200

    assert reads == [] and (await offers(first))[CHANGED]["usd_per_gpu_hour"] == 2.29


async def test_an_offer_a_feed_dropped_is_served_again_once_an_administrator_puts_it(
    pair: tuple[Client, Client],
) -> None:
    first, _ = pair
    offer = (await offers(first))[CHANGED]
    services = services_of(first)
    async with services.sessions() as session, session.begin():
        # What a price feed that no longer lists the offer does.
        await session.execute(update(OfferRow).where(OfferRow.id == CHANGED).values(gone_at=datetime.now(UTC)))
        await record_catalog(session, datetime.now(UTC))
    await services.reload_catalog()
    assert CHANGED not in await offers(first)

    answer = await first.put(f"/v1/admin/offers/{CHANGED}", json=offer | {"usd_per_gpu_hour": 2.19}, headers=HEADERS)

    assert answer.status_code == 200 and (await offers(first))[CHANGED]["usd_per_gpu_hour"] == 2.19
    async with services.sessions() as session:
        stored = await load_catalog(session)
        assert stored is not None and services.view.version == stored.version == await stored_version(session)


async def test_a_price_change_keeps_the_answers_that_never_read_that_gpus_offers(pair: tuple[Client, Client]) -> None:
    first, second = pair
    kept = ["/v1/models", "/v1/models/llama-3.1-70b", "/v1/systems", "/v1/systems/dgx-h100", "/v1/gpus/mi300x"]
    moved = ["/v1/gpus/h100-sxm", "/v1/offers?gpu=h100-sxm", "/v1/gpus?vendor=nvidia", "/v1/providers"]
    before = {path: (await first.get(path)).headers["etag"] for path in [*kept, *moved]}
    offer = (await offers(first))[CHANGED]
    # A new lowest H100 price: the GPU's own answer and every list of offers or prices moves with it.
    cheaper = offer | {"usd_per_gpu_hour": 0.11}
    assert (await first.put(f"/v1/admin/offers/{CHANGED}", json=cheaper, headers=HEADERS)).status_code == 200
    await services_of(second).reload_catalog()
    for client in (first, second):
        for path in kept:
            answer = await client.get(path, headers={"If-None-Match": before[path]})
            assert answer.status_code == 304, path
        for path in moved:
            answer = await client.get(path, headers={"If-None-Match": before[path]})
            assert answer.status_code == 200 and answer.headers["etag"] != before[path], path
    h100 = (await second.get("/v1/gpus/h100-sxm")).json()
    assert h100["lowest_price"]["on_demand"]["usd_per_gpu_hour"] == 0.11
