"""Two instances on one PostgreSQL: a price change through one is served by the other, with Redis up or down."""

from __future__ import annotations

import asyncio
import time
from contextlib import AsyncExitStack
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from api.app import create_app
from api.settings import Settings
from tests.integration.conftest import OwnRedis, wait_for_ping

pytestmark = pytest.mark.integration

KEY = "sync-test-key"
OFFER_ID = "runpod-h200-on-demand"
DEADLINE_S = 2.0
Client = AsyncTestClient[Litestar]


async def instances(stack: AsyncExitStack, database_url: str, redis_url: str, count: int = 2) -> list[Client]:
    settings = Settings(database_url=database_url, redis_url=redis_url, api_keys=(KEY,), redis_retry_after_s=0)
    return [await stack.enter_async_context(AsyncTestClient(app=create_app(settings))) for _ in range(count)]


async def price_seen(client: Client) -> float:
    body = (await client.get("/v1/offers", params={"gpu": "h200", "limit": 200})).json()
    return float(next(o["usd_per_gpu_hour"] for o in body["items"] if o["id"] == OFFER_ID))


async def change_price(client: Client, price: float) -> None:
    body = (await client.get("/v1/offers", params={"gpu": "h200", "limit": 200})).json()
    current: dict[str, Any] = next(o for o in body["items"] if o["id"] == OFFER_ID)
    response = await client.put(
        f"/v1/admin/offers/{OFFER_ID}", json=current | {"usd_per_gpu_hour": price}, headers={"X-API-Key": KEY}
    )
    assert response.status_code == 200, response.text


async def seconds_until_seen(client: Client, price: float) -> float:
    """How long until `client` answers with the new price; gives up after the deadline."""
    started = time.monotonic()
    while time.monotonic() - started < DEADLINE_S:
        if await price_seen(client) == price:
            return time.monotonic() - started
        await asyncio.sleep(0.05)
    return float("inf")


async def test_change_through_one_instance_is_seen_by_the_other(seeded_postgres: str, own_redis: OwnRedis) -> None:
    await wait_for_ping(own_redis.url)
    async with AsyncExitStack() as stack:
        first, second = await instances(stack, seeded_postgres, own_redis.url)
        before = (await second.get("/v1/gpus/h200")).json()
        assert await price_seen(second) == 5.29

        await change_price(first, 2.22)
        assert await price_seen(first) == 2.22  # the writer reloads at once
        assert await seconds_until_seen(second, 2.22) < DEADLINE_S
        after = (await second.get("/v1/gpus/h200")).json()
        assert (
            after["lowest_price"]["on_demand"]["usd_per_gpu_hour"]
            == 2.22
            != before["lowest_price"]["on_demand"]["usd_per_gpu_hour"]
        )
        ready = [(await c.get("/health/ready")).json()["catalog_version"] for c in (first, second)]
        assert ready[0] == ready[1]

        # Recommendation ids follow the catalog: the same question after the change is a new recommendation.
        body = {"workload": {"kind": "inference", "model": "llama-3.1-8b"}, "constraints": {"gpus": ["h200"]}}
        new_id = (await second.post("/v1/recommendations", json=body)).json()["id"]
        await change_price(first, 2.11)
        assert await seconds_until_seen(second, 2.11) < DEADLINE_S
        newer = (await second.post("/v1/recommendations", json=body)).json()
        assert newer["id"] != new_id and newer["options"][0]["offer"]["usd_per_gpu_hour"] == 2.11


async def test_with_redis_stopped_instances_find_the_change_by_polling(
    seeded_postgres: str, own_redis: OwnRedis
) -> None:
    await wait_for_ping(own_redis.url)
    async with AsyncExitStack() as stack:
        first, second = await instances(stack, seeded_postgres, own_redis.url)
        assert await price_seen(second) == 5.29
        own_redis.kill()

        await change_price(first, 1.99)
        assert await seconds_until_seen(second, 1.99) < DEADLINE_S
        assert (await second.get("/health/ready")).json()["redis"] == "degraded"
