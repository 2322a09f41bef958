"""One request must not hurt later ones: text no store accepts is refused at decoding time, data the database
refuses is dropped rather than retried forever, and readiness reports a queue of recommendations that is stuck."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import select, text

from api.adapters.storage.bootstrap import migrate_and_seed
from api.adapters.storage.database import create_engine, create_session_factory
from api.adapters.storage.tables import SavedRecommendationRow
from api.app import create_app
from api.chat.tools import ToolContext, ToolError, call_tool
from api.services.recommendation_store import RecommendationStore, SavedRecommendation
from api.settings import Settings
from tests.conftest import create_database, drop_database

pytestmark = pytest.mark.integration

KEY = "poison-key"
ADMIN = {"X-API-Key": KEY}
STORED_HEADER = "x-recommendation-stored"
NUL = "\x00"
CUSTOM_MODEL = {"params_b": 7.0, "layers": 32, "hidden_size": 4096, "attention_heads": 32, "kv_heads": 8}
OFFER = {
    "provider": "digitalocean",
    "gpu": "h100-sxm",
    "pricing": "on_demand",
    "usd_per_gpu_hour": 3.39,
    "as_of": "2026-05-28",
    "source": "https://www.digitalocean.com/pricing/gpu-droplets",
}
OFFER_ID = "poison-test-h100-sxm-on-demand"


def nul_recommendation(concurrency: int) -> dict[str, object]:
    model = CUSTOM_MODEL | {"name": f"evil{NUL}model"}
    return {"workload": {"kind": "inference", "custom_model": model, "concurrency": concurrency}}


@pytest.fixture(scope="module")
async def database() -> AsyncIterator[str]:
    url = await create_database()
    await migrate_and_seed(url)
    yield url
    await drop_database(url)


def app_on(url: str, **overrides: object) -> Litestar:
    settings = Settings(database_url=url, api_keys=(KEY,), rate_limit_per_minute=0, pending_retry_s=0.05)
    return create_app(msgspec.structs.replace(settings, **overrides))


async def test_nul_in_a_workload_is_a_400_naming_the_field_and_later_answers_are_stored(database: str) -> None:
    async with AsyncTestClient(app=app_on(database)) as client:
        bad = await client.post("/v1/recommendations", json=nul_recommendation(8))
        assert bad.status_code == 400, bad.text
        assert bad.headers["content-type"].startswith("application/problem+json")
        assert [e["field"] for e in bad.json()["errors"]] == ["workload.custom_model.name"]
        good = await client.post(
            "/v1/recommendations", json={"workload": {"kind": "inference", "model": "llama-3.1-8b"}}
        )
        assert good.status_code == 200 and STORED_HEADER not in good.headers
        ready = (await client.get("/health/ready")).json()
        assert ready["recommendations"] == "ok" and ready["pending_recommendations"] == 0


async def test_nul_in_a_tool_call_is_a_tool_error_naming_the_field(database: str) -> None:
    async with AsyncTestClient(app=app_on(database)) as client:
        services = client.app.state.services
        kept: list[str] = []

        async def keep(result: object, _: object) -> None:
            kept.append(str(result))

        context = ToolContext(view=services.view, rate=services.exchange_rate, now=datetime.now(UTC), keep=keep)
        with pytest.raises(ToolError, match=r"workload\.custom_model\.name"):
            await call_tool("recommend_gpus", nul_recommendation(9), context)
        assert kept == []


@pytest.mark.parametrize("field", ["source", "notes", "instance", "region"])
async def test_nul_in_offer_text_is_a_400_not_an_outage(database: str, field: str) -> None:
    async with AsyncTestClient(app=app_on(database)) as client:
        body = OFFER | {field: f"bad{NUL}value"}
        put = await client.put(f"/v1/admin/offers/{OFFER_ID}", json=body, headers=ADMIN)
        assert put.status_code == 400, put.text
        assert "retry-after" not in put.headers
        assert [e["field"] for e in put.json()["errors"]] == [field]
        bulk = await client.post("/v1/admin/offers:bulk", json={"offers": [body | {"id": OFFER_ID}]}, headers=ADMIN)
        assert bulk.status_code == 400, bulk.text
        assert [(e["field"], e["line"]) for e in bulk.json()["errors"]] == [(field, 1)]
        columns = ["id", *OFFER, field]
        row = [OFFER_ID, *(str(v) for v in OFFER.values()), f"bad{NUL}value"]
        if field == "source":
            columns, row = columns[:-1], [*row[:-2], row[-1]]
        csv = ",".join(columns) + "\n" + ",".join(row) + "\n"
        bulk_csv = await client.post(
            "/v1/admin/offers:bulk", content=csv.encode(), headers=ADMIN | {"Content-Type": "text/csv"}
        )
        assert bulk_csv.status_code == 400, bulk_csv.text
        assert [(e["field"], e["line"]) for e in bulk_csv.json()["errors"]] == [(field, 2)]


def saved(rec_id: str, request: dict[str, str]) -> SavedRecommendation:
    return SavedRecommendation(
        id=rec_id, catalog_version="v", request=request, response=msgspec.Raw(b"{}"), created_at=datetime.now(UTC)
    )


async def test_a_refused_recommendation_is_dropped_and_does_not_hold_up_the_queue(database: str) -> None:
    engine = create_engine(database)
    sessions = create_session_factory(engine)
    store = RecommendationStore(sessions, retry_s=60, capacity=10)
    # The answer is stored as deflated bytes; the request is a JSONB document, which refuses a NUL.
    poison = saved("rec_" + "0" * 24, {"name": "a\x00b"})
    good = saved("rec_" + "1" * 24, {"name": "ab"})
    try:
        assert await store.save(poison) == "not_stored"
        assert store.pending == 0
        # Queued while the database was down, the poison pill first: the flush must get past it.
        store._pending.update({poison.id: poison, good.id: good})
        assert await store.flush() == 1
        assert store.pending == 0
        async with sessions() as session:
            ids = (await session.scalars(select(SavedRecommendationRow.id))).all()
        assert good.id in ids and poison.id not in ids
    finally:
        await store.close()
        await engine.dispose()


async def test_readiness_reports_a_queue_that_does_not_drain(database: str) -> None:
    url = await create_database()
    await migrate_and_seed(url)
    try:
        async with AsyncTestClient(app=app_on(url)) as client:
            engine = create_engine(url)
            async with engine.begin() as connection:
                # The database answers, but no recommendation can be written: the queue can only grow.
                await connection.execute(text("ALTER TABLE saved_recommendations RENAME TO saved_elsewhere"))
            await engine.dispose()
            answer = await client.post(
                "/v1/recommendations",
                json={"workload": {"kind": "training", "model": "llama-3.1-8b", "train_tokens": 1e9}},
            )
            assert answer.headers[STORED_HEADER] == "pending"
            deadline = time.monotonic() + 15
            ready = await client.get("/health/ready")
            while ready.json()["recommendations"] != "stalled" and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
                ready = await client.get("/health/ready")
            assert ready.status_code == 503, ready.text
            assert ready.json() | {"pending_recommendations": 1, "database": "ok"} == ready.json()
    finally:
        await drop_database(url)
