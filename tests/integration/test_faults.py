"""Faults on real services: Redis killed, PostgreSQL stopped and restarted, the service started without PostgreSQL.

Each test runs its own PostgreSQL cluster and its own redis-server (the machine's are never touched) and the app
served by uvicorn on a loopback port, spoken to over HTTP. Waits poll a condition up to a deadline; nothing asserts
on elapsed time.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import msgspec
import pytest
from redis.asyncio import Redis
from sqlalchemy import select

from api.adapters.storage.bootstrap import migrate_and_seed
from api.adapters.storage.database import DATABASE_ERRORS, create_engine, create_session_factory
from api.adapters.storage.offer_repository import write_offers
from api.adapters.storage.reference import load_reference_catalog
from api.adapters.storage.tables import SavedRecommendationRow
from api.app import create_app
from api.settings import Settings
from tests.conftest import LiveServer
from tests.integration.conftest import OwnPostgres, OwnRedis, wait_for_ping

pytestmark = pytest.mark.integration

KEY = "fault-key"
ADMIN = {"X-API-Key": KEY}
STORED_HEADER = "x-recommendation-stored"
DEADLINE_S = 15.0
EXISTING_OFFER = "digitalocean-h100-sxm-on-demand"
NEW_OFFER = "fault-test-h100-sxm-on-demand"

READS = ["/v1/gpus", "/v1/gpus/h100-sxm", "/v1/offers", "/v1/offers?gpu=h100-sxm&limit=200"]
ESTIMATE = {
    "workload": {"kind": "inference", "model": "llama-3.1-70b", "concurrency": 32},
    "gpu": "h200",
    "gpu_count": 8,
}
TCO = {"gpu": "h100-sxm", "gpu_count": 8, "years": 3, "utilization": 0.6}
# A different question in each phase, so that no answer can come from storage or a cache filled earlier.
REC_BEFORE = {"workload": {"kind": "inference", "model": "llama-3.1-8b", "concurrency": 8}}
REC_REDIS_DOWN = {"workload": {"kind": "fine_tuning", "model": "llama-3.1-8b", "method": "qlora"}}
REC_POSTGRES_DOWN = {"workload": {"kind": "inference", "model": "deepseek-r1", "concurrency": 50}}
REC_BOTH_DOWN = {"workload": {"kind": "image_generation", "model": "sdxl", "images_per_hour": 417}}
# Words that would show a database error leaking into a response.
LEAKS = ("select", "insert", "update ", "traceback", "asyncpg", "sqlalchemy", "postgres", "psycopg", "errno")


@asynccontextmanager
async def service(database_url: str, redis_url: str | None) -> AsyncIterator[httpx.AsyncClient]:
    """The app on the given services, served by uvicorn; an HTTP client for it."""
    settings = Settings(
        database_url=database_url,
        redis_url=redis_url,
        api_keys=(KEY,),
        catalog_poll_s=0.2,
        redis_retry_after_s=0,
        pending_retry_s=0.2,
    )
    with LiveServer(create_app(settings)) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=20) as client:
            yield client


async def wait_until(what: str, check: Callable[[], Awaitable[object]]) -> None:
    """Poll `check` until it returns something truthy; fail naming `what` and the last answer after the deadline."""
    deadline = time.monotonic() + DEADLINE_S
    last: object = None
    while time.monotonic() < deadline:
        last = await check()
        if last:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{what} within {DEADLINE_S:.0f}s; last check: {last!r}")


async def ready(client: httpx.AsyncClient) -> tuple[int, dict[str, Any]]:
    response = await client.get("/health/ready")
    return response.status_code, response.json()


async def offers(client: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    response = await client.get("/v1/offers", params={"gpu": "h100-sxm", "limit": 200})
    assert response.status_code == 200, response.text
    return {offer["id"]: offer for offer in response.json()["items"]}


async def put_offer(client: httpx.AsyncClient, offer: dict[str, Any], price: float) -> httpx.Response:
    return await client.put(f"/v1/admin/offers/{offer['id']}", json=offer | {"usd_per_gpu_hour": price}, headers=ADMIN)


async def serves(client: httpx.AsyncClient, offer_id: str, price: float) -> bool:
    """Whether the instance serves the offer at this price (a write within the reload interval of the one before it
    is served when the interval ends)."""
    return (await offers(client)).get(offer_id, {}).get("usd_per_gpu_hour") == price


async def history(client: httpx.AsyncClient, offer_id: str) -> list[tuple[str, float | None, float | None]]:
    response = await client.get(f"/v1/offers/{offer_id}/history")
    assert response.status_code == 200, response.text
    return [(i["change"], i["previous_usd_per_gpu_hour"], i["usd_per_gpu_hour"]) for i in response.json()["items"]]


async def recommend(client: httpx.AsyncClient, body: dict[str, Any]) -> httpx.Response:
    response = await client.post("/v1/recommendations", json=body)
    assert response.status_code == 200, response.text
    return response


async def assert_reads_answer(client: httpx.AsyncClient, recommendation: dict[str, Any]) -> httpx.Response:
    """Every catalog read and computation answers 200; returns the recommendation's response."""
    for url in READS:
        response = await client.get(url)
        assert response.status_code == 200, (url, response.status_code, response.text)
    for url, body in (("/v1/estimates", ESTIMATE), ("/v1/tco", TCO)):
        response = await client.post(url, json=body)
        assert response.status_code == 200, (url, response.status_code, response.text)
    return await recommend(client, recommendation)


async def assert_database_reads_answer(client: httpx.AsyncClient, at_once: int = 8) -> None:
    """Reads that go to the database, several at once, so that several pooled connections are used."""
    url = f"/v1/offers/{EXISTING_OFFER}/history"
    responses = await asyncio.gather(*(client.get(url) for _ in range(at_once)))
    assert [r.status_code for r in responses] == [200] * at_once, [r.text for r in responses if r.status_code != 200]


def assert_unavailable_problem(response: httpx.Response) -> None:
    """503 with Retry-After and a problem document that tells nothing about the database's internals."""
    context = (response.request.method, str(response.request.url), response.status_code, response.text)
    assert response.status_code == 503, context
    assert response.headers.get("retry-after", "").isdigit(), (context, dict(response.headers))
    assert int(response.headers["retry-after"]) > 0, context
    assert response.headers["content-type"].startswith("application/problem+json"), (context, dict(response.headers))
    problem = response.json()
    assert problem["status"] == 503 and problem["detail"], context
    leaked = [word for word in LEAKS if word in response.text.lower()]
    assert not leaked, (leaked, context)


async def stored_recommendations(database_url: str, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The saved responses among `ids`, read straight from the database (not through the service)."""
    engine = create_engine(database_url)
    try:
        async with create_session_factory(engine)() as session:
            rows = await session.scalars(select(SavedRecommendationRow).where(SavedRecommendationRow.id.in_(ids)))
            # Stored byte for byte as it was sent, deflated.
            return {row.id: msgspec.json.decode(zlib.decompress(row.response)) for row in rows}
    finally:
        await engine.dispose()


async def redis_ok(client: httpx.AsyncClient) -> bool:
    return (await ready(client))[1]["redis"] == "ok"


async def ready_ok(client: httpx.AsyncClient) -> tuple[int, dict[str, Any]] | None:
    answer = await ready(client)
    return answer if answer[0] == 200 else None


async def database_catalog(client: httpx.AsyncClient) -> dict[str, Any] | None:
    status, body = await ready(client)
    return body if status == 200 and body["catalog_source"] == "database" else None


async def flush(redis_url: str) -> None:
    client = Redis.from_url(redis_url, socket_timeout=2, socket_connect_timeout=2)
    try:
        await client.flushall()
    finally:
        await client.aclose()


async def wait_stored(database_url: str, expected: dict[str, dict[str, Any]]) -> None:
    """Poll the database until every expected recommendation is saved, then compare what was saved."""

    async def all_stored() -> dict[str, dict[str, Any]] | None:
        try:
            stored = await stored_recommendations(database_url, list(expected))
        except DATABASE_ERRORS:  # not accepting connections yet
            return None
        return stored if len(stored) == len(expected) else None

    await wait_until(f"{sorted(expected)} stored in saved_recommendations", all_stored)
    assert await stored_recommendations(database_url, list(expected)) == expected


async def test_acknowledged_writes_survive_redis_then_postgres_outages(
    own_postgres: OwnPostgres, own_redis: OwnRedis
) -> None:
    await migrate_and_seed(own_postgres.url)
    await wait_for_ping(own_redis.url)
    async with service(own_postgres.url, own_redis.url) as client:
        status, body = await ready(client)
        assert status == 200 and body["status"] == "ok" and body["catalog_source"] == "database", body

        # a. Acknowledged writes before any fault.
        existing = (await offers(client))[EXISTING_OFFER]
        seeded_price = existing["usd_per_gpu_hour"]
        assert seeded_price not in (2.75, 2.65, 2.55, 2.45)
        created = await put_offer(client, existing | {"id": NEW_OFFER, "notes": "fault test"}, 4.56)
        assert created.status_code == 201, created.text
        changed = await put_offer(client, existing, 2.75)
        assert changed.status_code == 200, changed.text
        rec_before = (await recommend(client, REC_BEFORE)).json()
        await assert_database_reads_answer(client)  # leaves several connections in the pool

        # b. Redis killed: everything answers, readiness says degraded, writes still go through.
        own_redis.kill()
        rec_redis_down = (await assert_reads_answer(client, REC_REDIS_DOWN)).json()
        status, body = await ready(client)
        assert status == 200 and body["redis"] == "degraded" and body["database"] == "ok", body
        changed = await put_offer(client, existing, 2.65)
        assert changed.status_code == 200, changed.text
        await wait_until("the instance serves the new price", lambda: serves(client, EXISTING_OFFER, 2.65))
        own_redis.start()
        await wait_for_ping(own_redis.url)
        await wait_until("readiness reports redis ok after its restart", lambda: redis_ok(client))

        # c. PostgreSQL stopped (Redis emptied, so reads can only come from the in-memory snapshot).
        await flush(own_redis.url)
        own_postgres.stop()
        during = await assert_reads_answer(client, REC_POSTGRES_DOWN)
        assert during.headers.get(STORED_HEADER) == "pending", dict(during.headers)
        rec_postgres_down = during.json()
        fetched = await client.get(f"/v1/recommendations/{rec_postgres_down['id']}")
        assert fetched.status_code == 200 and fetched.json() == rec_postgres_down, fetched.text
        listed = await offers(client)
        assert listed[EXISTING_OFFER]["usd_per_gpu_hour"] == 2.65 and listed[NEW_OFFER]["usd_per_gpu_hour"] == 4.56
        assert_unavailable_problem(await put_offer(client, existing, 2.55))
        assert_unavailable_problem(await client.delete(f"/v1/admin/offers/{NEW_OFFER}", headers=ADMIN))
        bulk = {"offers": [listed[NEW_OFFER] | {"usd_per_gpu_hour": 9.99}]}
        assert_unavailable_problem(await client.post("/v1/admin/offers:bulk", json=bulk, headers=ADMIN))
        status, body = await ready(client)
        assert status == 503 and body["database"] == "unavailable", body

        # d. PostgreSQL back: ready again, every acknowledged write kept, none of the refused ones applied.
        own_postgres.start()
        await wait_until("readiness answers 200 after PostgreSQL restarted", lambda: ready_ok(client))
        await assert_database_reads_answer(client)  # no connection from before the restart is handed out
        assert await history(client, EXISTING_OFFER) == [
            ("updated", 2.75, 2.65),
            ("updated", seeded_price, 2.75),
            ("created", None, seeded_price),
        ]
        assert await history(client, NEW_OFFER) == [("created", None, 4.56)]
        changed = await put_offer(client, existing, 2.45)
        assert changed.status_code == 200, changed.text
        await wait_until("the instance serves the new price", lambda: serves(client, EXISTING_OFFER, 2.45))
        listed = await offers(client)
        assert listed[EXISTING_OFFER]["usd_per_gpu_hour"] == 2.45 and listed[NEW_OFFER]["usd_per_gpu_hour"] == 4.56
        stored = await stored_recommendations(own_postgres.url, [rec_before["id"], rec_redis_down["id"]])
        assert stored == {rec_before["id"]: rec_before, rec_redis_down["id"]: rec_redis_down}
        fetched = await client.get(f"/v1/recommendations/{rec_before['id']}")
        assert fetched.status_code == 200 and fetched.json() == rec_before, fetched.text
        # The one computed during the outage was held by the instance and is stored now that PostgreSQL is back.
        await wait_stored(own_postgres.url, {rec_postgres_down["id"]: rec_postgres_down})


async def test_started_with_postgres_down_serves_the_reference_catalog_then_the_database_one(
    own_postgres: OwnPostgres, own_redis: OwnRedis
) -> None:
    await migrate_and_seed(own_postgres.url)
    reference = load_reference_catalog()
    seeded = next(o for o in reference.offers if o.id == EXISTING_OFFER)
    engine = create_engine(own_postgres.url)
    try:  # an administrator's price, so the database's catalog differs from the shipped one
        async with create_session_factory(engine)() as session, session.begin():
            await write_offers(session, [msgspec.structs.replace(seeded, usd_per_gpu_hour=1.11)], [], actor="test")
    finally:
        await engine.dispose()
    await wait_for_ping(own_redis.url)
    own_postgres.stop()

    async with service(own_postgres.url, own_redis.url) as client:
        status, body = await ready(client)
        assert status == 503 and body["catalog_source"] == "reference" and body["database"] == "unavailable", body
        assert body["catalog_version"] == reference.version, body
        assert (await offers(client))[EXISTING_OFFER]["usd_per_gpu_hour"] == seeded.usd_per_gpu_hour
        await assert_reads_answer(client, REC_BEFORE)
        assert_unavailable_problem(await put_offer(client, (await offers(client))[EXISTING_OFFER], 2.22))

        own_postgres.start()
        await wait_until("readiness answers 200 from the database catalog", lambda: database_catalog(client))
        assert (await offers(client))[EXISTING_OFFER]["usd_per_gpu_hour"] == 1.11


async def test_recommendation_made_with_postgres_and_redis_down_is_served_from_the_queue_then_stored(
    own_postgres: OwnPostgres, own_redis: OwnRedis
) -> None:
    """No cache can hold it: the instance's own queue answers the id until PostgreSQL is back and it is stored."""
    await migrate_and_seed(own_postgres.url)
    await wait_for_ping(own_redis.url)
    async with service(own_postgres.url, own_redis.url) as client:
        assert (await ready(client))[0] == 200
        own_postgres.stop()
        own_redis.kill()

        made = await recommend(client, REC_BOTH_DOWN)
        assert made.headers.get(STORED_HEADER) == "pending", dict(made.headers)
        fetched = await client.get(f"/v1/recommendations/{made.json()['id']}")
        assert fetched.status_code == 200 and fetched.json() == made.json(), fetched.text

        own_postgres.start()
        await wait_stored(own_postgres.url, {made.json()["id"]: made.json()})
        fetched = await client.get(f"/v1/recommendations/{made.json()['id']}")  # Redis still down: from storage
        assert fetched.status_code == 200 and fetched.json() == made.json(), fetched.text
