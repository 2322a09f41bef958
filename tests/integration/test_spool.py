"""Recommendations still waiting for the database when an instance stops are spooled and stored by the next start."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from litestar.testing import AsyncTestClient
from sqlalchemy import select

from api.adapters.storage.database import create_engine, create_session_factory
from api.adapters.storage.tables import SavedRecommendationRow
from api.app import create_app
from api.settings import Settings
from tests.conftest import free_port

pytestmark = pytest.mark.integration

BODY = {"workload": {"kind": "inference", "model": "llama-3.1-8b", "concurrency": 21}}


async def stored_ids(url: str) -> list[str]:
    engine = create_engine(url)
    try:
        async with create_session_factory(engine)() as session:
            return list((await session.scalars(select(SavedRecommendationRow.id))).all())
    finally:
        await engine.dispose()


async def test_pending_recommendations_survive_a_stop(seeded_postgres: str, tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    unreachable = f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/postgres"
    down = Settings(
        database_url=unreachable, rate_limit_per_minute=0, pending_retry_s=0.05, pending_spool_dir=str(spool)
    )
    async with AsyncTestClient(app=create_app(down)) as client:
        answer = await client.post("/v1/recommendations", json=BODY)
        assert answer.status_code == 200 and answer.headers["x-recommendation-stored"] == "pending"
        rec_id = answer.json()["id"]
    assert [p.name.startswith("pending-") for p in spool.iterdir()] == [True]

    up = Settings(
        database_url=seeded_postgres, rate_limit_per_minute=0, pending_retry_s=0.05, pending_spool_dir=str(spool)
    )
    async with AsyncTestClient(app=create_app(up)) as client:
        deadline = time.monotonic() + 15
        stored = await stored_ids(seeded_postgres)
        while rec_id not in stored and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            stored = await stored_ids(seeded_postgres)
        assert rec_id in stored
        fetched = await client.get(f"/v1/recommendations/{rec_id}")
        assert fetched.status_code == 200 and fetched.json()["id"] == rec_id
    assert list(spool.iterdir()) == []


async def test_an_unwritable_spool_is_logged_not_raised(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    unreachable = f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/postgres"
    down = Settings(database_url=unreachable, rate_limit_per_minute=0, pending_spool_dir=str(blocker / "spool"))
    async with AsyncTestClient(app=create_app(down)) as client:
        answer = await client.post("/v1/recommendations", json=BODY)
        assert answer.headers["x-recommendation-stored"] == "pending"
        rec_id = answer.json()["id"]
    assert any("could not spool" in r.getMessage() and rec_id in r.getMessage() for r in caplog.records)
