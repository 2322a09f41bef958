"""The service on real PostgreSQL and Redis, and with Redis unreachable or killed mid-run."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from redis.asyncio import Redis

from api.app import create_app
from api.settings import Settings
from tests.conftest import REDIS_URL, free_port
from tests.integration.conftest import OwnRedis, wait_for_ping

pytestmark = pytest.mark.integration

CATALOG_READS = [
    "/v1/gpus",
    "/v1/gpus?vendor=amd&sort=memory_gb",
    "/v1/gpus/h200",
    "/v1/gpus/compare?ids=h100-sxm,h200,mi300x",
    "/v1/systems",
    "/v1/systems/dgx-h100",
    "/v1/providers",
    "/v1/offers?gpu=h100-sxm",
    "/v1/models",
    "/v1/models/deepseek-r1",
]


def app_on(database_url: str, redis_url: str | None) -> Litestar:
    return create_app(Settings(database_url=database_url, redis_url=redis_url, redis_retry_after_s=0))


async def test_reads_are_cached_in_redis(seeded_postgres: str, redis: Redis) -> None:
    async with AsyncTestClient(app=app_on(seeded_postgres, REDIS_URL)) as client:
        ready = (await client.get("/health/ready")).json()
        assert ready == ready | {"status": "ok", "database": "ok", "redis": "ok", "catalog_source": "database"}
        first = await client.get("/v1/gpus/h200")
        assert first.status_code == 200
        # Keyed by what the answer read: the catalog's structure and the H200's offers, not its whole version.
        keys = [key async for key in redis.scan_iter("gpu-advisor:v1:catalog:*")]
        assert any(b"/v1/gpus/h200" in key for key in keys)
        key = next(key for key in keys if b"/v1/gpus/h200" in key)
        assert await redis.get(key) == first.content
        second = await client.get("/v1/gpus/h200")
        assert second.content == first.content


async def test_every_read_answers_with_redis_unreachable(seeded_postgres: str) -> None:
    async with AsyncTestClient(app=app_on(seeded_postgres, "redis://127.0.0.1:1/0")) as client:
        for url in CATALOG_READS:
            response = await client.get(url)
            assert response.status_code == 200, (url, response.text)
        ready = await client.get("/health/ready")
        assert ready.status_code == 200
        assert ready.json()["redis"] == "degraded" and ready.json()["status"] == "degraded"


async def test_redis_killed_and_restarted_mid_run(seeded_postgres: str, own_redis: OwnRedis) -> None:
    await wait_for_ping(own_redis.url)
    async with AsyncTestClient(app=app_on(seeded_postgres, own_redis.url)) as client:
        assert (await client.get("/health/ready")).json()["redis"] == "ok"
        assert (await client.get("/v1/gpus/h100-sxm")).status_code == 200

        own_redis.kill()
        for url in CATALOG_READS:
            response = await client.get(url)
            assert response.status_code == 200, (url, response.text)
        assert (await client.get("/health/ready")).json()["redis"] == "degraded"

        own_redis.start()
        await wait_for_ping(own_redis.url)
        assert (await client.get("/health/ready")).json()["redis"] == "ok"
        assert (await client.get("/v1/gpus/mi300x")).status_code == 200


async def test_database_down_at_start_still_serves_the_reference_catalog() -> None:
    dead = f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/nothing"
    async with AsyncTestClient(app=app_on(dead, None)) as client:
        assert (await client.get("/v1/gpus/h200")).status_code == 200
        ready = await client.get("/health/ready")
        assert ready.status_code == 503
        assert ready.json() | {"catalog_version": ""} == ready.json() | {
            "status": "unavailable",
            "database": "unavailable",
            "catalog_source": "reference",
            "catalog_version": "",
        }


async def test_recommendation_from_one_instance_is_served_by_another(seeded_postgres: str, redis: Redis) -> None:
    body = {"workload": {"kind": "inference", "model": "deepseek-r1", "concurrency": 50}}
    async with AsyncTestClient(app=app_on(seeded_postgres, REDIS_URL)) as first:
        created = await first.post("/v1/recommendations", json=body)
    assert created.status_code == 200 and "x-recommendation-stored" not in created.headers
    rec_id = created.json()["id"]
    assert await redis.get(f"gpu-advisor:v1:rec:{rec_id}") is not None

    await redis.flushdb()  # another instance after a restart: nothing cached
    async with AsyncTestClient(app=app_on(seeded_postgres, REDIS_URL)) as second:
        stored = await second.get(f"/v1/recommendations/{rec_id}")
        again = await second.post("/v1/recommendations", json=body)
    assert stored.status_code == 200 and stored.json() == created.json()
    assert again.json()["created_at"] == created.json()["created_at"]  # served from storage, not recomputed


async def test_recommendations_answer_with_redis_down(seeded_postgres: str) -> None:
    body = {"workload": {"kind": "fine_tuning", "model": "llama-3.1-8b", "method": "qlora"}}
    async with AsyncTestClient(app=app_on(seeded_postgres, "redis://127.0.0.1:1/0")) as client:
        created = await client.post("/v1/recommendations", json=body)
        assert created.status_code == 200
        assert (await client.get(created.headers["location"])).status_code == 200
